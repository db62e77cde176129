/** A client pays from the payment link in a real browser. */
import fs from 'node:fs/promises';
import { aClient, aDraft, eventsOf, startApp, Tenant, TestApp } from '../support/app';
import { PHONE, screenshot, screenshotOnPhone, useBrowser } from '../support/browser';
import { asGermanSeller, FRENCH_BUYER } from '../support/legal-identity';
import { freePort } from '../support/net';
import { pdfText, renderPdf } from '../support/pdf';

const ctx = useBrowser();
let app: TestApp;
let t: Tenant;

beforeAll(async () => {
  // BASE_URL is where the browser reaches the server: the pages' forms are accepted from that origin only.
  const port = await freePort();
  app = await startApp({ port, baseUrl: `http://127.0.0.1:${port}` });
  t = await app.tenant();
});
afterAll(() => app?.stop());

async function paymentUrlOf(tenant: Tenant, invoiceId: number): Promise<string> {
  return (await tenant.api.post(`/invoices/${invoiceId}/initiate-payment`)).body.payment_url as string;
}

describe('the payment page in a browser', () => {
  test('when a client pays a test invoice with the Pay button, then the page shows Paid and one payment fires its events once', async () => {
    // Arrange
    const invoice = await aDraft(t);
    const url = await paymentUrlOf(t, invoice.id);
    const page = await ctx.browser.newPage();

    // Act
    await page.goto(url);
    await screenshot(page, 'pay-test-unpaid');
    await screenshotOnPhone(ctx.browser, url, 'pay-test-unpaid');
    const pay = page.getByRole('button', { name: /^Pay/ });
    await pay.click();
    await page.waitForURL(url);
    await screenshot(page, 'pay-test-paid');
    await screenshotOnPhone(ctx.browser, url, 'pay-test-paid');

    // Assert
    expect(await page.getByText('Paid — thank you').isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: /^Pay/ }).count()).toBe(0);
    const read = (await t.api.get(`/invoices/${invoice.id}`)).body.invoice;
    expect(read).toMatchObject({ status: 'paid', amount_due: 0 });
    expect(read.payments).toEqual([expect.objectContaining({ gateway: 'test', method: 'simulated', amount: read.total })]);
    const events = (await eventsOf(app, t.businessId)).filter((e) => e.data.invoice?.id === invoice.id).map((e) => e.type);
    expect(events.filter((type) => type === 'payment.received')).toHaveLength(1);
    expect(events.filter((type) => type === 'invoice.paid')).toHaveLength(1);
    await page.close();
  });

  test('when the client follows Download PDF, then the browser saves the invoice, and after paying the receipt', async () => {
    // Arrange
    const invoice = await aDraft(t);
    const url = await paymentUrlOf(t, invoice.id);
    const page = await ctx.browser.newPage();
    await page.goto(url);
    const number = (await t.api.get(`/invoices/${invoice.id}`)).body.invoice.number;
    const downloadPdf = async (name: string) => {
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download PDF' }).click()]);
      const bytes = await fs.readFile(await download.path());
      await renderPdf(bytes, name);
      return { filename: download.suggestedFilename(), text: await pdfText(bytes) };
    };

    // Act
    const before = await downloadPdf('pay-invoice-in-browser');
    await page.getByRole('button', { name: /^Pay/ }).click();
    await page.waitForURL(url);
    await screenshot(page, 'pay-paid-download');
    await screenshotOnPhone(ctx.browser, url, 'pay-paid-download');
    const after = await downloadPdf('pay-receipt-in-browser');
    const reference = (await t.api.get(`/invoices/${invoice.id}`)).body.invoice.payments[0].gateway_reference;
    const referenceRow = await page.getByRole('row', { name: /^Reference:/ }).innerText();

    // Assert
    expect(before.filename).toBe(`${number}.pdf`);
    expect(before.text).toMatch(/Amount due\s+\$150\.00/);
    expect(after.filename).toBe(`receipt-${number}.pdf`);
    expect(after.text).toContain('RECEIPT');
    expect(after.text).toMatch(/Payment method\s+Test payment/);
    expect(reference).toMatch(/^sim_[0-9a-f]{24}$/);
    expect(after.text).toMatch(new RegExp(`Test payment\\s+${reference}\\s+\\$150\\.00`));
    expect(referenceRow).toBe(`Reference: ${reference}`);
    await page.close();
  });

  test('when a live invoice has no gateway, then there is no Pay button and the page says online payment is not set up', async () => {
    // Arrange
    const live = await app.tenant({ mode: 'live' });
    const invoice = await aDraft(live);
    const url = await paymentUrlOf(live, invoice.id);
    const page = await ctx.browser.newPage();

    // Act
    await page.goto(url);
    await screenshot(page, 'pay-live-no-gateway');
    await screenshotOnPhone(ctx.browser, url, 'pay-live-no-gateway');

    // Assert
    expect(await page.getByRole('button', { name: /^Pay/ }).count()).toBe(0);
    expect(await page.getByText('Online payment is not set up').isVisible()).toBe(true);
    await page.close();
  });

  test('when a bank transfer was partly refunded, then the receipt shows the method by name with its reference, and what was refunded', async () => {
    // Arrange
    const invoice = await aDraft(t);
    const url = await paymentUrlOf(t, invoice.id);
    const payment = (await t.api.post(`/invoices/${invoice.id}/payments`, { method: 'bank_transfer', reference: 'WC-ORDER-1042' })).body.payment;
    await t.api.post(`/payments/${payment.id}/refund`, { amount: 20 });
    const page = await ctx.browser.newPage();

    // Act
    await page.goto(url);
    await screenshot(page, 'pay-partly-refunded');
    await screenshotOnPhone(ctx.browser, url, 'pay-partly-refunded');

    // Assert
    expect(await page.getByText('Partly paid').isVisible()).toBe(true);
    expect(await page.getByRole('columnheader', { name: 'Refunded' }).isVisible()).toBe(true);
    const row = page.getByRole('row', { name: /Bank transfer/ });
    expect(await row.getByRole('cell').allTextContents()).toEqual([expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), 'Bank transfer', '$150.00', '$20.00']);
    expect(await page.getByRole('row', { name: 'Reference: WC-ORDER-1042' }).isVisible()).toBe(true);
    await page.close();
  });
});

describe('the payment page of a taxed invoice', () => {
  test('when an invoice has lines at 7 % and 19 %, then the page names both parties and shows a tax line per rate, and at 390 px nothing is wider than the screen', async () => {
    // Arrange
    const seller = await app.tenant();
    await asGermanSeller(app, seller.businessId);
    const rate = async (body: Record<string, unknown>) => (await seller.api.post('/tax-rates', body)).body.tax_rate.id as number;
    const [reduced, standard] = [await rate({ display_name: 'VAT', percentage: 7 }), await rate({ display_name: 'VAT', percentage: 19 })];
    const buyer = { ...FRENCH_BUYER, tax_id: 'FR40303265045' };
    const client = (await seller.api.post('/clients', aClient(buyer))).body.client;
    // Book 20.00 × 7 % = 1.40; design 1,234.00 × 19 % = 234.46; total 1,254.00 + 235.86 = 1,489.86.
    const items = [
      { description: 'Printed book', quantity: 1, unit_price: 20, tax_rate_ids: [reduced] },
      { description: 'Design work', quantity: 1, unit_price: 1234 },
    ];
    const invoice = (await seller.api.post('/invoices', { client_id: client.id, currency: 'EUR', items, default_tax_rate_ids: [standard], purchase_order: 'PO-2026-118' })).body.invoice;
    const url = await paymentUrlOf(seller, invoice.id);
    const page = await ctx.browser.newPage();
    const phone = await ctx.browser.newPage({ viewport: PHONE });

    // Act
    await page.goto(url);
    await screenshot(page, 'pay-taxed');
    await phone.goto(url);
    await screenshot(phone, 'pay-taxed-phone');

    // Assert
    const cells = async (name: string | RegExp) => page.getByRole('row', { name }).getByRole('cell').allTextContents();
    const party = async (role: string) => (await page.getByRole('row', { name: new RegExp(`^${role}`) }).getByRole('cell').innerText()).split('\n');
    const issueDate = (await seller.api.get(`/invoices/${invoice.id}`)).body.invoice.issue_date;
    expect(await page.getByText(`Issue date: ${issueDate}`).isVisible()).toBe(true);
    expect(await party('From')).toEqual(['Muster Design GmbH', 'Hauptstraße 1', '10115 Berlin', 'Germany', 'VAT ID: DE123456789', 'billing@muster.example', '+49 30 1234567']);
    expect(await page.getByRole('link', { name: 'billing@muster.example' }).getAttribute('href')).toBe('mailto:billing@muster.example');
    expect(await party('Bill to')).toEqual(['Camille Martin', 'Atelier Martin SARL', '12 rue de la Paix', '75002 Paris', 'France', client.email, 'VAT ID: FR40303265045', 'Purchase order: PO-2026-118']);
    expect(await cells(/Printed book/)).toEqual(['Printed book', '1', '€20.00', '7 %', '€20.00']);
    expect(await cells(/Design work/)).toEqual(['Design work', '1', '€1,234.00', '19 %', '€1,234.00']);
    expect(await cells('Subtotal €1,254.00')).toEqual(['Subtotal', '€1,254.00']);
    expect(await cells('VAT 7 % on €20.00 €1.40')).toEqual(['VAT 7 % on €20.00', '€1.40']);
    expect(await cells('VAT 19 % on €1,234.00 €234.46')).toEqual(['VAT 19 % on €1,234.00', '€234.46']);
    expect(await page.locator('#amount-due').textContent()).toBe('€1,489.86');
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await page.close();
    await phone.close();
  });
});

describe('the payment page on a phone', () => {
  const longDescription = `Consulting-${'x'.repeat(80)}`;
  const invoices: [string, Record<string, unknown>][] = [
    ['kwd', { currency: 'KWD', items: [{ description: longDescription, quantity: 1, unit_price: 12.345 }] }],
    ['large-usd', { currency: 'USD', items: [{ description: longDescription, quantity: 1, unit_price: 9999999.99 }] }],
  ];

  test.each(invoices)('when an invoice (%s) has a long amount and a long unbroken description, then at 390 px nothing is wider than the screen, unpaid or paid', async (name, overrides) => {
    // Arrange
    const invoice = await aDraft(t, overrides);
    const url = await paymentUrlOf(t, invoice.id);
    const phone = await ctx.browser.newPage({ viewport: PHONE });
    const width = () => phone.evaluate(() => document.documentElement.scrollWidth);

    // Act
    await phone.goto(url);
    const unpaid = await width();
    await screenshot(phone, `pay-long-amounts-${name}-unpaid-phone`);
    await phone.getByRole('button', { name: /^Pay/ }).click();
    await phone.getByText('Paid — thank you').waitFor();
    const paid = await width();
    await screenshot(phone, `pay-long-amounts-${name}-paid-phone`);
    await phone.setViewportSize({ width: 1280, height: 800 });
    await screenshot(phone, `pay-long-amounts-${name}-paid`);

    // Assert
    expect(unpaid).toBeLessThanOrEqual(PHONE.width);
    expect(paid).toBeLessThanOrEqual(PHONE.width);
    await phone.close();
  });
});
