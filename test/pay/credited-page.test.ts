/** The payment page of an invoice partly credited by a credit note, in a real browser: it asks only for what is left. */
import { aDraft, startApp, Tenant, TestApp } from '../support/app';
import { screenshot, screenshotOnPhone, useBrowser } from '../support/browser';
import { freePort } from '../support/net';

const ctx = useBrowser();
let app: TestApp;
let t: Tenant;

beforeAll(async () => {
  const port = await freePort();
  app = await startApp({ port, baseUrl: `http://127.0.0.1:${port}` });
  t = await app.tenant();
});
afterAll(() => app?.stop());

describe('the payment page of a credited invoice', () => {
  test('when a line was credited, then the page shows the credit and asks for the rest, and paying it settles the invoice', async () => {
    // Arrange: 150.00, of which Hosting (30.00) credited.
    const draft = await aDraft(t);
    const url = (await t.api.post(`/invoices/${draft.id}/initiate-payment`)).body.payment_url as string;
    await t.api.post(`/invoices/${draft.id}/credit-notes`, { items: [{ invoice_item_id: draft.items[1].id }], reason: 'order_change' });
    const page = await ctx.browser.newPage();

    // Act
    await page.goto(url);
    await screenshot(page, 'pay-credited');
    await screenshotOnPhone(ctx.browser, url, 'pay-credited');
    const credited = await page.locator('tfoot').innerText();
    await page.getByRole('button', { name: /^Pay/ }).click();
    await page.waitForURL(url);

    // Assert
    expect(credited).toMatch(/Credited\s+\$30\.00/);
    expect(credited).toMatch(/Amount due\s+\$120\.00/);
    expect((await t.api.get(`/invoices/${draft.id}`)).body.invoice).toMatchObject({ status: 'paid', amount_paid: 120, amount_credited: 30, amount_due: 0 });
    await page.close();
  });
});
