/**
 * Where the invoice PDF breaks its pages: a heading is never left at the foot of a page without what
 * it heads. Each case moves the table down a line at a time (a longer address, more items), so
 * every position against the page's foot is tried. Rendered directly, read back with pdftotext.
 */
import type { SellerSnapshot } from '../../server/businesses/view';
import type { BuyerSnapshot } from '../../server/clients/view';
import { InvoiceDocument, invoicePdf } from '../../server/invoices/pdf';
import { pdfInfo, pdfText, renderPdf } from '../support/pdf';

type Overrides = { sellerName?: string; address?: string; descriptions?: string[]; paid?: boolean; seller?: Partial<SellerSnapshot>; buyer?: Partial<BuyerSnapshot> };

const NO_SELLER_DETAILS: Omit<SellerSnapshot, 'legal_name'> = {
  address_line1: null,
  address_line2: null,
  city: null,
  postal_code: null,
  state: null,
  country: null,
  tax_id: null,
  registration_number: null,
  email: null,
  phone: null,
  iban: null,
  bic: null,
  invoice_footer: null,
  peppol_id: null,
};

function aDocument({ sellerName = 'Acme Studio', address, descriptions = ['Design'], paid = false, seller = {}, buyer = {} }: Overrides): InvoiceDocument {
  const total = descriptions.length * 1000;
  return {
    seller: { ...NO_SELLER_DETAILS, legal_name: sellerName, ...seller },
    buyer: {
      name: 'Client Name',
      company: null,
      email: 'client@example.com',
      address: address ?? null,
      city: null,
      postal_code: null,
      state: null,
      country: null,
      tax_id: null,
      tax_exempt: 'none',
      buyer_reference: null,
      peppol_id: null,
      ...buyer,
    },
    invoice: {
      id: 1,
      number: 'INV-000001',
      status: paid ? 'paid' : 'sent',
      currency: 'USD',
      subtotal: total,
      total_excluding_tax: total,
      total_tax: 0,
      rounding_amount: 0,
      total,
      amount_paid: paid ? total : 0,
      amount_credited: 0,
      credit_note_ids: null,
      tax_exempt: 'none',
      tax_breakdown: [],
      buyer_reference: null,
      purchase_order: null,
      livemode: true,
      issue_date: '2026-11-25',
      due_date: '2026-12-25',
      paid_at: paid ? '2026-11-26T10:00:00.000Z' : null,
      notes: null,
      updated_at: '2026-11-26T10:00:00.000Z',
    },
    items: descriptions.map((description) => ({ description, quantity_units: 10_000, unit_price: 1000, amount: 1000, amount_excluding_tax: 1000, tax_rate_ids: null })),
    payments: paid ? [{ amount: total, amount_refunded: 0, method: 'card', status: 'succeeded', paid_at: '2026-11-26T10:00:00.000Z', created_at: '2026-11-26T10:00:00.000Z' }] : [],
    paymentUrl: 'https://pay.example.com/pay/token',
  } as unknown as InvoiceDocument;
}

/** The text of each page. */
async function pagesOf(bytes: Buffer): Promise<string[]> {
  const count = Number((await pdfInfo(bytes)).Pages);
  return Promise.all(Array.from({ length: count }, (_, index) => pdfText(bytes, index + 1)));
}

/** The page's text after `heading`'s line, without the footer. */
function below(page: string, heading: RegExp): string {
  const lines = page.split('\n');
  const at = lines.findIndex((line) => heading.test(line));
  return lines
    .slice(at + 1)
    .filter((line) => !/Page \d+ of \d+/.test(line))
    .join('\n');
}

describe('invoice PDF page breaks', () => {
  test('when the first item is several lines long, then the table header is never left alone at the foot of a page', async () => {
    const firstItem = Array.from({ length: 60 }, (_, index) => `first${index}`).join(' '); // about 6 lines
    for (let addressLines = 20; addressLines <= 70; addressLines += 1) {
      // Arrange: the address pushes the table down one line further each time
      const address = Array.from({ length: addressLines }, (_, index) => `L${index}`).join('\n');

      // Act
      const pages = await pagesOf((await invoicePdf(aDocument({ address, descriptions: [firstItem, 'Second item'] }))).content);

      // Assert
      for (const page of pages.filter((text) => /DESCRIPTION\s+QTY/.test(text))) {
        expect({ addressLines, below: below(page, /DESCRIPTION\s+QTY/) }).toEqual({ addressLines, below: expect.stringMatching(/first0|first\d+|Second item/) });
      }
    }
  });

  test('when the payments follow the totals near the foot of a page, then their title stays with their header and first row', async () => {
    for (let items = 20; items <= 50; items += 1) {
      // Arrange: one more item row each time moves the receipt's payments down
      const descriptions = Array.from({ length: items }, (_, index) => `Item ${index + 1}`);

      // Act
      const { content } = await invoicePdf(aDocument({ descriptions, paid: true }));

      // Assert
      const withTitle = (await pagesOf(content)).filter((text) => /^\s*PAYMENTS\s*$/m.test(text));
      expect(withTitle).toHaveLength(1);
      expect({ items, below: below(withTitle[0], /^\s*PAYMENTS\s*$/) }).toEqual({ items, below: expect.stringMatching(/DATE\s+METHOD\s+AMOUNT\s*\n\s*2026-11-26\s+Card/) });
    }
  });

  test('when the seller\'s name has many line breaks and is very long, then it is one clamped heading and the invoice facts stay on page one', async () => {
    // Arrange
    const sellerName = `${'Acme\n'.repeat(40)}${'Studio '.repeat(40)}`;

    // Act
    const { content } = await invoicePdf(aDocument({ sellerName }));

    // Assert
    const [first, ...rest] = await pagesOf(content);
    expect(rest).toEqual([]);
    expect(first).toMatch(/Invoice number\s+INV-000001/);
    expect(first).toMatch(/Acme Acme Acme/);
    expect(first).toContain('…');
    expect(first).toMatch(/Amount due\s+\$10\.00/);
    await renderPdf(content, 'unit-long-business-name');
  });

  test('when every field of both parties is as long as allowed, then each word is printed, the facts stay on page one and BILL TO stays with the buyer\'s name', async () => {
    // Arrange: words tagged by field, each field at its length limit
    const filler = (tag: string, max: number) => {
      const words: string[] = [];
      while ([...words, `${tag}${words.length}`].join(' ').length <= max) words.push(`${tag}${words.length}`);
      return words.join(' ');
    };
    const seller = {
      address_line1: filler('sellerstreet', 255),
      address_line2: filler('sellerextra', 255),
      city: filler('sellercity', 100),
      postal_code: filler('sellerzip', 20),
      state: filler('sellerstate', 100),
      country: 'DE',
      tax_id: filler('sellertax', 50),
      registration_number: filler('sellerreg', 100),
      email: `${'s'.repeat(64)}@${'e'.repeat(60)}.example.com`,
      phone: filler('sellerphone', 50),
      iban: 'DE89370400440532013000',
      bic: 'COBADEFFXXX',
      invoice_footer: filler('sellerfooter', 1000),
    };
    const buyer = {
      name: filler('buyername', 255),
      company: filler('buyercompany', 255),
      address: Array.from({ length: 10 }, (_, line) => filler(`buyerstreet${line}x`, 95)).join('\n'),
      city: filler('buyercity', 100),
      postal_code: filler('buyerzip', 20),
      state: filler('buyerstate', 100),
      country: 'FR',
      tax_id: filler('buyertax', 50),
    };
    const references = { buyer_reference: filler('buyerref', 255), purchase_order: filler('buyerpo', 255) };
    const document = aDocument({ sellerName: filler('sellername', 255), seller, buyer, descriptions: ['Design', 'Hosting'] });

    // Act
    const { content } = await invoicePdf({ ...document, invoice: { ...document.invoice, ...references } as InvoiceDocument['invoice'] });

    // Assert
    const pages = await pagesOf(content);
    const text = pages.join('\n');
    const fields = [...Object.values(seller), ...Object.values(buyer), ...Object.values(references)].filter((value) => !['DE', 'FR'].includes(value));
    for (const word of fields.flatMap((value) => value.split(/\s+/)).filter((word) => /^(seller|buyer)[a-z0-9]+$/.test(word))) {
      expect({ word, count: text.match(new RegExp(`\\b${word}\\b`, 'g'))?.length ?? 0 }).toEqual({ word, count: 1 });
    }
    // The e-mail address is wider than its column: it is cut at the edge, its pieces on the left of their lines.
    const leftColumn = text.split('\n').map((line) => line.trim().split(/\s{2,}/)[0]).join('');
    expect(leftColumn).toContain(seller.email);
    expect(text).toMatch(/Germany[\s\S]*France/);
    expect(text).toContain('IBAN: DE89 3704 0044 0532 0130 00');
    expect(text).toContain('BIC: COBADEFFXXX');
    expect(pages[0]).toMatch(/Invoice number\s+INV-000001/);
    expect(pages[0]).toMatch(/Payment terms\s+Payment due within 30 days/);
    const billTo = pages.findIndex((page) => /^\s*BILL TO\s*$/m.test(page));
    expect(below(pages[billTo], /^\s*BILL TO\s*$/)).toMatch(/^\s*buyername0\b/);
    expect(text).toMatch(/Amount due\s+\$20\.00/);
    await renderPdf(content, 'unit-long-parties');
  });

  test.each([
    ['2026-11-25', 'Due on receipt'],
    ['2026-11-26', 'Payment due within 1 day'],
    ['2027-01-09', 'Payment due within 45 days'],
  ])('when an invoice issued on 2026-11-25 is due on %s, then its terms read "%s"', async (dueDate, terms) => {
    const document = aDocument({});

    const { content } = await invoicePdf({ ...document, invoice: { ...document.invoice, due_date: dueDate } as InvoiceDocument['invoice'] });

    expect(await pdfText(content)).toMatch(new RegExp(`Payment terms\\s+${terms}\\n`));
  });
});
