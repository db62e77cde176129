/** A client pays from the payment link in a real browser. */
import fs from 'node:fs/promises';
import { aDraft, eventsOf, startApp, Tenant, TestApp } from '../support/app';
import { PHONE, screenshot, screenshotOnPhone, useBrowser } from '../support/browser';
import { freePort } from '../support/net';
import { pdfText } from '../support/pdf';

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
    const downloadPdf = async () => {
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download PDF' }).click()]);
      return { filename: download.suggestedFilename(), text: await pdfText(await fs.readFile(await download.path())) };
    };

    // Act
    const before = await downloadPdf();
    await page.getByRole('button', { name: /^Pay/ }).click();
    await page.waitForURL(url);
    await screenshot(page, 'pay-paid-download');
    await screenshotOnPhone(ctx.browser, url, 'pay-paid-download');
    const after = await downloadPdf();

    // Assert
    expect(before.filename).toBe(`${number}.pdf`);
    expect(before.text).toMatch(/Amount due\s+\$150\.00/);
    expect(after.filename).toBe(`receipt-${number}.pdf`);
    expect(after.text).toContain('RECEIPT');
    expect(after.text).toMatch(/Payment method\s+Test payment/);
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

  test('when a bank transfer was partly refunded, then the receipt shows the method by name and what was refunded, and no reference', async () => {
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
    expect(await page.content()).not.toContain('WC-ORDER-1042');
    await page.close();
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
