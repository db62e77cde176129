/**
 * The legal elements of the invoice PDF (contract, "PDF", "Tax" and "Legal identity"): both parties'
 * blocks, the payment terms, one tax line per rate, the reverse-charge and exemption texts, the
 * rounding, the bank details and the seller's footer. Read back with pdftotext; page 1 of a taxed
 * invoice is rendered with pdftoppm to be looked at.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { businessChangesSchema } from '../../server/businesses/schema';
import { validateInput } from '../../server/validation';
import { aClient, Tenant, useApp } from '../support/app';
import { PDF_OUTPUT_DIR, pdfText } from '../support/pdf';

const ctx = useApp({ baseUrl: 'https://pay.example.com', rateLimitPerMinute: 100_000 });

const SELLER = {
  legal_name: 'Muster Design GmbH',
  address_line1: 'Hauptstraße 1',
  address_line2: 'Hinterhaus, 3. OG',
  city: 'Berlin',
  postal_code: '10115',
  country: 'DE',
  tax_id: 'DE123456789',
  registration_number: 'HRB 12345 B',
  email: 'billing@muster.example',
  phone: '+49 30 1234567',
  iban: 'DE89 3704 0044 0532 0130 00',
  bic: 'COBADEFFXXX',
  invoice_footer: 'Geschäftsführerin: Erika Mustermann · Amtsgericht Berlin-Charlottenburg',
};

const BUYER = {
  name: 'Camille Martin',
  company: 'Atelier Martin SARL',
  address: '12 rue de la Paix',
  city: 'Paris',
  postal_code: '75002',
  state: 'Île-de-France',
  country: 'FR',
  tax_id: 'FR40303265045',
};

/** A tenant whose business has the seller's legal identity. */
async function aSeller(): Promise<Tenant> {
  const t = await ctx.app.tenant();
  await ctx.app.server.services.businesses.update(t.businessId, validateInput(businessChangesSchema, SELLER));
  return t;
}

async function aRate(t: Tenant, body: Record<string, unknown>): Promise<number> {
  const res = await t.api.post('/tax-rates', body);
  if (res.status !== 201) throw new Error(`could not create a tax rate: ${res.status} ${res.text}`);
  return res.body.tax_rate.id;
}

async function aBuyer(t: Tenant, overrides: Record<string, unknown> = {}): Promise<number> {
  const res = await t.api.post('/clients', aClient({ ...BUYER, ...overrides }));
  if (res.status !== 201) throw new Error(`could not create a client: ${res.status} ${res.text}`);
  return res.body.client.id;
}

/** An invoice of the tenant, issued (numbered, with its parties' snapshot) unless `draft`. */
async function anInvoice(t: Tenant, body: Record<string, unknown>, { draft = false } = {}): Promise<any> {
  const res = await t.api.post('/invoices', { currency: 'EUR', issue_date: '2026-11-25', due_date: '2026-12-25', ...body });
  if (res.status !== 201) throw new Error(`could not create an invoice: ${res.status} ${res.text}`);
  if (!draft) await t.api.post(`/invoices/${res.body.invoice.id}/initiate-payment`);
  return (await t.api.get(`/invoices/${res.body.invoice.id}`)).body.invoice;
}

async function pdfOf(t: Tenant, invoiceId: number): Promise<Buffer> {
  const res = await t.api.get(`/invoices/${invoiceId}/pdf`);
  if (res.status !== 200) throw new Error(`no PDF: ${res.status} ${res.text}`);
  return res.bytes;
}

/** Page 1 as test/output/pdf/<driver>-<name>.png at 80 dpi, to be looked at. */
async function renderFirstPage(bytes: Buffer, name: string): Promise<void> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pdf-'));
  try {
    const file = path.join(dir, 'invoice.pdf');
    await fs.writeFile(file, bytes);
    await fs.mkdir(PDF_OUTPUT_DIR, { recursive: true });
    await promisify(execFile)('pdftoppm', ['-png', '-r', '80', '-f', '1', '-l', '1', '-singlefile', file, path.join(PDF_OUTPUT_DIR, `${process.env.TEST_DB ?? 'sqlite'}-${name}`)]);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/**
 * `text` as a regular expression that takes any run of spaces (pdftotext's columns) for one; the
 * space before a per cent sign may be dropped (pdftotext does in a narrow table cell).
 */
const spaced = (text: string) =>
  new RegExp(
    text
      .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
      .replace(/ %/g, '\\s*%')
      .replace(/ /g, '\\s+'),
  );

const line = (description: string, unit_price: number, extra: Record<string, unknown> = {}) => ({ description, quantity: 1, unit_price, ...extra });

describe('the legal elements of the invoice PDF', () => {
  test('when an issued invoice has lines at 7 % and 19 %, then the PDF shows both parties, the terms, a tax column, one tax line per rate, the bank details and the footer', async () => {
    // Arrange
    const t = await aSeller();
    const reduced = await aRate(t, { display_name: 'VAT', percentage: 7 });
    const standard = await aRate(t, { display_name: 'VAT', percentage: 19 });
    const clientId = await aBuyer(t, { buyer_reference: '04011000-12345-67' });
    // Book 20.00 × 7 % = 1.40; design 1,234.00 × 19 % = 234.46; total 1,254.00 + 235.86 = 1,489.86.
    const invoice = await anInvoice(t, {
      client_id: clientId,
      purchase_order: 'PO-2026-118',
      items: [line('Printed book', 20, { tax_rate_ids: [reduced] }), line('Design work', 1234)],
      default_tax_rate_ids: [standard],
    });

    // Act
    const bytes = await pdfOf(t, invoice.id);

    // Assert
    const text = await pdfText(bytes);
    for (const expected of ['Muster Design GmbH', 'Hauptstraße 1', 'Hinterhaus, 3. OG', '10115 Berlin', 'Germany', 'VAT ID: DE123456789', 'Registration number: HRB 12345 B', 'billing@muster.example', '+49 30 1234567']) {
      expect(text).toMatch(spaced(expected));
    }
    for (const expected of ['Camille Martin', 'Atelier Martin SARL', '12 rue de la Paix', '75002 Paris', 'Île-de-France', 'France', 'VAT ID: FR40303265045', 'Buyer reference: 04011000-12345-67', 'Purchase order: PO-2026-118']) {
      expect(text).toMatch(spaced(expected));
    }
    expect(text).toMatch(spaced('Issue date 2026-11-25'));
    expect(text).toMatch(spaced('Due date 2026-12-25'));
    expect(text).toMatch(spaced('Payment terms Payment due within 30 days'));
    expect(text).toMatch(spaced('DESCRIPTION QTY UNIT PRICE TAX AMOUNT'));
    expect(text).toMatch(spaced('Printed book 1 €20.00 7 % €20.00'));
    expect(text).toMatch(spaced('Design work 1 €1,234.00 19 % €1,234.00'));
    expect(text).toMatch(spaced('Subtotal €1,254.00'));
    expect(text).toMatch(spaced('VAT 7 % on €20.00 €1.40'));
    expect(text).toMatch(spaced('VAT 19 % on €1,234.00 €234.46'));
    expect(text).not.toContain('Rounding');
    expect(text).toMatch(spaced('Total €1,489.86'));
    expect(text).toMatch(spaced('Amount due €1,489.86'));
    expect(text).toMatch(spaced('IBAN: DE89 3704 0044 0532 0130 00'));
    expect(text).toMatch(spaced('BIC: COBADEFFXXX'));
    expect(text).toMatch(spaced(`Reference: ${invoice.number}`));
    expect(text).toContain(invoice.payment_url);
    expect(text).toMatch(spaced(SELLER.invoice_footer));
    await renderFirstPage(bytes, 'invoice-taxed');
  });

  test('when the buyer is under reverse charge, then the tax line is at 0 % and the PDF says the recipient accounts for the VAT, with the VAT ID', async () => {
    const t = await aSeller();
    const vat = await aRate(t, { display_name: 'VAT', percentage: 19 });
    const clientId = await aBuyer(t, { tax_exempt: 'reverse' });

    const invoice = await anInvoice(t, { client_id: clientId, items: [line('Consulting', 1000)], default_tax_rate_ids: [vat] });
    const bytes = await pdfOf(t, invoice.id);
    const text = await pdfText(bytes);

    expect(text).toMatch(spaced('Consulting 1 €1,000.00 0 % €1,000.00'));
    expect(text).toMatch(spaced('VAT 0 % on €1,000.00 €0.00'));
    expect(text).toMatch(spaced('Total €1,000.00'));
    expect(text).toMatch(spaced('Reverse charge: VAT to be accounted for by the recipient'));
    expect(text).toMatch(spaced("Recipient's VAT ID: FR40303265045"));
    await renderFirstPage(bytes, 'invoice-reverse-charge');
  });

  test('when a line is at an exempt rate (E), then its exemption reason is printed once, beside a taxed line', async () => {
    const t = await aSeller();
    const exempt = await aRate(t, { display_name: 'VAT exempt', percentage: 0, category: 'E', exemption_reason: 'Exempt under Art. 132(1)(j) VAT Directive' });
    const vat = await aRate(t, { display_name: 'VAT', percentage: 19 });
    const clientId = await aBuyer(t);

    const invoice = await anInvoice(t, { client_id: clientId, items: [line('Tuition', 300, { tax_rate_ids: [exempt] }), line('Course book', 50, { tax_rate_ids: [exempt] }), line('Materials', 100, { tax_rate_ids: [vat] })] });
    const text = await pdfText(await pdfOf(t, invoice.id));

    expect(text).toMatch(spaced('VAT exempt 0 % on €350.00 €0.00'));
    expect(text).toMatch(spaced('VAT 19 % on €100.00 €19.00'));
    expect(text.match(/Exempt under Art\. 132\(1\)\(j\) VAT Directive/g)).toHaveLength(1);
    expect(text).not.toContain('Reverse charge');
  });

  test('when prices include 19 %, then the subtotal excludes the tax and a rounding line keeps the quoted total', async () => {
    const t = await aSeller();
    const vat = await aRate(t, { display_name: 'VAT', percentage: 19, inclusive: true });
    const clientId = await aBuyer(t);

    // Each 9.99 holds 9.99 × 100 / 119 = 8.3950… → 8.39 net; 25.17 net × 19 % = 4.7823 → 4.78 tax; 29.97 − (25.17 + 4.78) = 0.02.
    const invoice = await anInvoice(t, { client_id: clientId, items: [line('Mug', 9.99), line('Cap', 9.99), line('Pen', 9.99)], default_tax_rate_ids: [vat] });
    const bytes = await pdfOf(t, invoice.id);
    const text = await pdfText(bytes);

    expect(invoice).toMatchObject({ total_excluding_tax: 25.17, total_tax: 4.78, rounding_amount: 0.02, total: 29.97 });
    expect(text).toMatch(spaced('Mug 1 €9.99 19 % €9.99'));
    expect(text).toMatch(spaced('Subtotal €25.17'));
    expect(text).toMatch(spaced('VAT 19 % on €25.17 €4.78'));
    expect(text).toMatch(spaced('Rounding €0.02'));
    expect(text).toMatch(spaced('Total €29.97'));
    await renderFirstPage(bytes, 'invoice-inclusive');
  });

  test('when an invoice has no tax rate, then it has no tax column, subtotal or tax lines, and the parties are still shown', async () => {
    const t = await aSeller();
    const clientId = await aBuyer(t);

    const invoice = await anInvoice(t, { client_id: clientId, items: [line('Design work', 100)] });
    const text = await pdfText(await pdfOf(t, invoice.id));

    expect(text).toMatch(spaced('DESCRIPTION QTY UNIT PRICE AMOUNT'));
    expect(text).not.toMatch(/\bTAX\b|Subtotal|Tax notes/i);
    expect(text).toMatch(spaced('Total €100.00'));
    expect(text).toMatch(spaced('VAT ID: DE123456789'));
    expect(text).toMatch(spaced('75002 Paris'));
  });

  test('when the business and the client change after issue, then a draft shows them as they are now and the issued invoice as they were', async () => {
    // Arrange
    const t = await aSeller();
    const clientId = await aBuyer(t);
    const draft = await anInvoice(t, { client_id: clientId, items: [line('Work', 10)] }, { draft: true });
    const issued = await anInvoice(t, { client_id: clientId, items: [line('Work', 10)] });

    // Act
    await ctx.app.server.services.businesses.update(t.businessId, validateInput(businessChangesSchema, { legal_name: 'Renamed Design AG', city: 'Hamburg' }));
    await t.api.patch(`/clients/${clientId}`, { city: 'Lyon' });
    const draftText = await pdfText(await pdfOf(t, draft.id));
    const issuedText = await pdfText(await pdfOf(t, issued.id));

    // Assert
    expect(draftText).toContain('Renamed Design AG');
    expect(draftText).toMatch(spaced('10115 Hamburg'));
    expect(draftText).toMatch(spaced('75002 Lyon'));
    expect(issuedText).toContain('Muster Design GmbH');
    expect(issuedText).not.toContain('Renamed Design AG');
    expect(issuedText).toMatch(spaced('10115 Berlin'));
    expect(issuedText).toMatch(spaced('75002 Paris'));
  });
});
