/**
 * What the payment page and its PDF tell the client over HTTP: whom the invoice is billed to, when
 * it was issued, how to reach the seller, and, on the receipt, each payment's reference.
 */
import { aClient, Tenant, useApp } from '../support/app';
import { asGermanSeller, FRENCH_BUYER } from '../support/legal-identity';
import { pdfText, renderPdf } from '../support/pdf';

const ctx = useApp({ rateLimitPerMinute: 100_000 });

/** A business with a legal identity and contact, in `mode`. */
async function aSeller(mode: 'test' | 'live' = 'test'): Promise<Tenant> {
  const t = await ctx.app.tenant({ mode, currency: 'EUR' });
  await asGermanSeller(ctx.app, t.businessId);
  return t;
}

/** An issued invoice of 300.00 to the French buyer, and its payment link's path on the test server. */
async function anIssuedInvoice(t: Tenant): Promise<{ invoice: any; path: string }> {
  const client = (await t.api.post('/clients', aClient(FRENCH_BUYER))).body.client;
  const created = (await t.api.post('/invoices', { client_id: client.id, currency: 'EUR', due_date: '2099-12-31', items: [{ description: 'Design', quantity: 1, unit_price: 300 }] })).body.invoice;
  const url = new URL((await t.api.post(`/invoices/${created.id}/initiate-payment`)).body.payment_url);
  return { invoice: (await t.api.get(`/invoices/${created.id}`)).body.invoice, path: `${ctx.app.url}${url.pathname}` };
}

/** The page's text: tags out, a line break for <br>, one space between words. */
async function pageText(path: string): Promise<{ html: string; text: string }> {
  const html = await (await fetch(path)).text();
  const text = html
    .replace(/<br>/g, '\n')
    .replace(/<[^>]+>/g, ' ')
    .replace(/[^\S\n]+/g, ' ')
    .replace(/ ?\n ?/g, '\n');
  return { html, text };
}

async function receiptOf(path: string, name: string): Promise<string> {
  const bytes = Buffer.from(await (await fetch(`${path}/pdf`)).arrayBuffer());
  await renderPdf(bytes, name);
  return pdfText(bytes);
}

describe('the payment page', () => {
  test('when an invoice is open, then the page shows the bill-to block, the issue and due dates and the seller\'s contact, its e-mail a link', async () => {
    // Arrange
    const t = await aSeller();
    const { invoice, path } = await anIssuedInvoice(t);

    // Act
    const { html, text } = await pageText(path);

    // Assert
    expect(text).toContain(`Issue date: ${invoice.issue_date}\nDue date: 2099-12-31`);
    expect(text).toContain(`Bill to Camille Martin\nAtelier Martin SARL\n12 rue de la Paix\n75002 Paris\nFrance\n${invoice.buyer.email}`);
    expect(text).toContain('From Muster Design GmbH\nHauptstraße 1\n10115 Berlin\nGermany\nVAT ID: DE123456789\nbilling@muster.example\n+49 30 1234567');
    expect(html).toContain('<a href="mailto:billing@muster.example">billing@muster.example</a>');
  });

  test('when a live invoice cannot be paid online, then the notice gives the seller\'s e-mail to contact', async () => {
    const t = await aSeller('live');
    const { path } = await anIssuedInvoice(t);

    const { text } = await pageText(path);

    expect(text).toContain('Online payment is not set up for this invoice. Please contact Test Business at billing@muster.example to pay it.');
  });
});

describe('the receipt', () => {
  test('when a bank transfer with a reference settles the invoice, then the page and the receipt PDF show the reference with the parties and the issue date', async () => {
    // Arrange
    const t = await aSeller();
    const { invoice, path } = await anIssuedInvoice(t);

    // Act
    await t.api.post(`/invoices/${invoice.id}/payments`, { method: 'bank_transfer', reference: 'BANK-REF-2026-0042' });
    const { text } = await pageText(path);
    const receipt = await receiptOf(path, 'receipt-with-reference');

    // Assert
    expect(text).toContain('Paid — thank you');
    expect(text).toContain(`Issue date: ${invoice.issue_date}`);
    expect(text).toMatch(/Bank transfer €300\.00 Reference: BANK-REF-2026-0042\n/);
    expect(receipt).toContain('RECEIPT');
    expect(receipt).toMatch(new RegExp(`Issue date\\s+${invoice.issue_date}`));
    expect(receipt).toContain('BILL TO');
    expect(receipt).toContain('Camille Martin');
    expect(receipt).toContain('billing@muster.example');
    expect(receipt).toMatch(/DATE\s+METHOD\s+REFERENCE\s+AMOUNT/);
    expect(receipt).toMatch(/\d{4}-\d{2}-\d{2}\s+Bank transfer\s+BANK-REF-2026-0042\s+€300\.00/);
  });

  test('when one payment has a reference and another none, then the receipt shows a dash for the one without', async () => {
    // Arrange
    const t = await aSeller();
    const { invoice, path } = await anIssuedInvoice(t);

    // Act
    await t.api.post(`/invoices/${invoice.id}/payments`, { method: 'cash', amount: 100 });
    await t.api.post(`/invoices/${invoice.id}/payments`, { method: 'check', amount: 200, reference: 'CHK 000123' });
    const receipt = await receiptOf(path, 'receipt-two-payments');

    // Assert
    expect(receipt).toMatch(/Cash\s+—\s+€100\.00/);
    expect(receipt).toMatch(/Check\s+CHK 000123\s+€200\.00/);
  });

  test('when no payment has a reference, then the receipt has no reference column', async () => {
    const t = await aSeller();
    const { invoice, path } = await anIssuedInvoice(t);

    await t.api.post(`/invoices/${invoice.id}/payments`, { method: 'cash' });
    const receipt = await receiptOf(path, 'receipt-no-reference');

    expect(receipt).toMatch(/DATE\s+METHOD\s+AMOUNT/);
    expect(receipt).not.toContain('REFERENCE');
  });
});
