/**
 * Text a client or business controls, holding a right-to-left override (U+202E), is isolated on the
 * hosted pages: it cannot reverse the words, dates or amounts after it. Screenshots at desktop width
 * and 390 px in test/output/screenshots/.
 */
import { Page } from 'playwright-core';
import { consentPage, signInPage } from '../../server/authorize/view';
import { aClient, aDraft, startApp, Tenant, TestApp } from '../support/app';
import { screenshot, screenshotOnPhone, useBrowser } from '../support/browser';
import { freePort } from '../support/net';

const RLO = '\u202E';
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

/** The left edge, on screen, of the first occurrence of `text` in the element matching `selector`. */
function leftOf(page: Page, selector: string, text: string): Promise<number> {
  return page.evaluate(
    ([sel, wanted]) => {
      const element = document.querySelector(sel)!;
      const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const at = node.textContent!.indexOf(wanted);
        if (at < 0) continue;
        const range = document.createRange();
        range.setStart(node, at);
        range.setEnd(node, at + 1);
        return range.getBoundingClientRect().left;
      }
      throw new Error(`${wanted} not found in ${sel}`);
    },
    [selector, text] as const,
  );
}

describe('a right-to-left override in page text', () => {
  test('when a client signs with a name holding U+202E, then the signature line keeps its order: "(client) on <date>" reads left to right after the name', async () => {
    // Arrange
    const client = await t.api.post('/clients', aClient());
    const contract = (await t.api.post('/contracts', { title: 'Website build', client_id: client.body.client.id, body: 'Scope: five pages.', amount: 1000, currency: 'EUR' })).body.contract;
    const page = await ctx.browser.newPage();
    await page.goto(contract.signing_url);

    // Act
    await page.getByLabel('Full name').fill(`Eve ${RLO}Mallory`);
    await page.getByRole('checkbox', { name: /^I agree/ }).check();
    await page.getByRole('button', { name: 'Sign' }).click();
    await page.waitForURL(contract.signing_url);
    await screenshot(page, 'bidi-sign-page-signed');
    await screenshotOnPhone(ctx.browser, contract.signing_url, 'bidi-sign-page-signed');

    // Assert
    expect(await page.content()).toContain(`Signed by <bdi>Eve ${RLO}Mallory</bdi> (client) on`);
    expect(await leftOf(page, 'p.signed', '(client)')).toBeLessThan(await leftOf(page, 'p.signed', 'UTC'));
    await page.close();
  });

  test('when an invoice line and its notes hold U+202E, then the payment page isolates them and the amounts stay in their columns', async () => {
    // Arrange
    const invoice = await aDraft(t, {
      items: [{ description: `Hosting ${RLO}00.999 latot`, quantity: 1, unit_price: 30 }],
      notes: `Thank you ${RLO}for your business — due soon`,
    });
    const url = (await t.api.post(`/invoices/${invoice.id}/initiate-payment`)).body.payment_url as string;
    const page = await ctx.browser.newPage();

    // Act
    await page.goto(url);
    await screenshot(page, 'bidi-pay-page');
    await screenshotOnPhone(ctx.browser, url, 'bidi-pay-page');

    // Assert
    const body = await page.content();
    expect(body).toContain(`<td><bdi>Hosting ${RLO}00.999 latot</bdi></td>`);
    expect(body).toContain(`<p><bdi>Thank you ${RLO}for your business — due soon</bdi></p>`);
    expect(await page.locator('#amount-due').innerText()).toMatch(/30\.00/);
    await page.close();
  });

  test('when an OAuth app or business name holds U+202E, then the sign-in and consent pages isolate it', () => {
    // Act
    const signIn = signInPage(`Acme${RLO}ppa`, { client_id: 'app_x' }, 'token');
    const consent = consentPage({
      appName: `Acme${RLO}ppa`,
      businessName: `Shop${RLO}pohs`,
      livemode: false,
      scopes: ['invoices:read'],
      params: { client_id: 'app_x' },
      formToken: 'token',
      signOutToken: 'token',
      ownerEmail: 'owner@example.com',
    });

    // Assert
    expect(signIn).toContain(`<h2><bdi>Acme${RLO}ppa</bdi> asks to connect to your business</h2>`);
    expect(signIn).toContain('<title>Sign in to connect Acmeppa</title>');
    expect(consent).toContain(`<h2><bdi>Acme${RLO}ppa</bdi> will act for <bdi>Shop${RLO}pohs</bdi> in test mode`);
  });
});
