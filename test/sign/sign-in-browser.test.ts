/** Clients sign and decline contracts in a real browser, on the page and inside another site's iframe. */
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { aClient, startApp, Tenant, TestApp } from '../support/app';
import { screenshot, screenshotOnPhone, useBrowser } from '../support/browser';
import { freePort } from '../support/net';

const ctx = useBrowser();
let app: TestApp;
let t: Tenant;
/** Another site (another origin: localhost, not 127.0.0.1) that frames embed_url. */
let shop: Server;
let shopOrigin: string;

beforeAll(async () => {
  const port = await freePort();
  app = await startApp({ port, baseUrl: `http://127.0.0.1:${port}` });
  t = await app.tenant();
  shop = createServer((req, res) => {
    const embed = new URL(req.url ?? '/', 'http://localhost').searchParams.get('embed') ?? '';
    res.setHeader('content-type', 'text/html');
    res.end(`<!DOCTYPE html><html><body><h1>Shop checkout</h1><iframe title="Contract" src="${embed.replace(/"/g, '&quot;')}" width="700" height="900"></iframe></body></html>`);
  });
  await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
  shopOrigin = `http://localhost:${(shop.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => shop?.close(resolve));
  await app?.stop();
});

async function aContract(): Promise<any> {
  const client = await t.api.post('/clients', aClient());
  const res = await t.api.post('/contracts', {
    title: 'Website build',
    client_id: client.body.client.id,
    body: 'Scope: a five-page website.\n\nPrice: 1 000 EUR, half on signature.\n\nThe client owns the result.',
    amount: 1000,
    currency: 'EUR',
  });
  return res.body.contract;
}

describe('signing in a browser', () => {
  test('when the client signs on the signing page and the business countersigns, then the contract is signed', async () => {
    // Arrange
    const contract = await aContract();
    const page = await ctx.browser.newPage();
    await page.goto(contract.signing_url);
    await screenshot(page, 'sign-page');
    await screenshotOnPhone(ctx.browser, contract.signing_url, 'sign-page');

    // Act
    await page.getByLabel('Full name').fill('Grace Hopper');
    await page.getByRole('checkbox', { name: /^I agree/ }).check();
    await page.getByRole('button', { name: 'Sign' }).click();
    await page.waitForURL(contract.signing_url);
    await screenshot(page, 'sign-page-signed');
    const countersigned = await t.api.post(`/contracts/${contract.id}/countersign`, { name: 'Ada Lovelace' });
    await page.reload();
    await screenshot(page, 'sign-page-both-signed');

    // Assert
    expect(countersigned.body.contract.status).toBe('signed');
    expect(await page.getByText('Signed by Grace Hopper').isVisible()).toBe(true);
    expect(await page.getByText('Signed by Ada Lovelace').isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Sign' }).count()).toBe(0);
    await page.close();
  });

  test('when the client signs inside an iframe on another site, then the signature is recorded', async () => {
    // Arrange
    const contract = await aContract();
    const page = await ctx.browser.newPage();
    await page.goto(`${shopOrigin}/checkout?embed=${encodeURIComponent(contract.embed_url)}`);
    const frame = page.frameLocator('iframe[title="Contract"]');

    // Act
    await frame.getByLabel('Full name').fill('Grace Hopper');
    await frame.getByRole('checkbox', { name: /^I agree/ }).check();
    await screenshot(page, 'sign-embed-filled');
    await frame.getByRole('button', { name: 'Sign' }).click();
    await frame.getByText('Signed by Grace Hopper').waitFor();
    await screenshot(page, 'sign-embed-signed');

    // Assert
    const read = (await t.api.get(`/contracts/${contract.id}`)).body.contract;
    expect(read).toMatchObject({ status: 'partially_signed', signatures: [expect.objectContaining({ party: 'client', name: 'Grace Hopper' })] });
    await page.close();
  });

  test('when the client declines inside the iframe, then the contract is declined', async () => {
    const contract = await aContract();
    const page = await ctx.browser.newPage();
    await page.goto(`${shopOrigin}/checkout?embed=${encodeURIComponent(contract.embed_url)}`);
    const frame = page.frameLocator('iframe[title="Contract"]');

    await frame.getByRole('button', { name: 'Decline' }).click();
    await frame.getByText('This contract was declined').waitFor();
    await screenshot(page, 'sign-embed-declined');

    expect((await t.api.get(`/contracts/${contract.id}`)).body.contract.status).toBe('declined');
    await page.close();
  });

  test('when the signing page (not the embed one) is put in another site\'s iframe, then the browser refuses to show it', async () => {
    const contract = await aContract();
    const page = await ctx.browser.newPage();
    await page.goto(`${shopOrigin}/checkout?embed=${encodeURIComponent(contract.signing_url)}`);

    const frame = page.frameLocator('iframe[title="Contract"]');
    await page.waitForTimeout(500);
    await screenshot(page, 'sign-page-framed-refused');

    expect(await frame.getByLabel('Full name').count()).toBe(0);
    await page.close();
  });
});
