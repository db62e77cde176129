/**
 * Where the invoice PDF breaks its pages: a heading is never left at the foot of a page without what
 * it heads. Each case moves the table down a line at a time (a longer address, more items), so
 * every position against the page's foot is tried. Rendered directly, read back with pdftotext.
 */
import { InvoiceDocument, invoicePdf } from '../../server/invoices/pdf';
import { pdfInfo, pdfText, renderPdf } from '../support/pdf';

type Overrides = { businessName?: string; address?: string; descriptions?: string[]; paid?: boolean };

function aDocument({ businessName = 'Acme Studio', address, descriptions = ['Design'], paid = false }: Overrides): InvoiceDocument {
  const total = descriptions.length * 1000;
  return {
    businessName,
    client: { name: 'Client Name', email: 'client@example.com', company: null, address: address ?? null },
    invoice: {
      id: 1,
      number: 'INV-000001',
      status: paid ? 'paid' : 'sent',
      currency: 'USD',
      total,
      amount_paid: paid ? total : 0,
      livemode: true,
      issue_date: '2026-11-25',
      due_date: '2026-12-25',
      paid_at: paid ? '2026-11-26T10:00:00.000Z' : null,
      notes: null,
      updated_at: '2026-11-26T10:00:00.000Z',
    },
    items: descriptions.map((description) => ({ description, quantity_units: 10_000, unit_price: 1000, amount: 1000 })),
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

  test('when the business name has many line breaks and is very long, then it is one clamped heading and the invoice facts stay on page one', async () => {
    // Arrange
    const businessName = `${'Acme\n'.repeat(40)}${'Studio '.repeat(40)}`;

    // Act
    const { content } = await invoicePdf(aDocument({ businessName }));

    // Assert
    const [first, ...rest] = await pagesOf(content);
    expect(rest).toEqual([]);
    expect(first).toMatch(/Invoice number\s+INV-000001/);
    expect(first).toMatch(/Acme Acme Acme/);
    expect(first).toContain('…');
    expect(first).toMatch(/Amount due\s+\$10\.00/);
    await renderPdf(content, 'unit-long-business-name');
  });
});
