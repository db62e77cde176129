/**
 * Clients sign and decline contracts in a real browser, on the page and inside another site's
 * iframe: both parties named, Decline confirmed on its own page (with JavaScript off too), and the
 * signed copy downloaded.
 */
import fs from 'node:fs/promises';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { aClient, startApp, Tenant, TestApp } from '../support/app';
import { PHONE, screenshot, screenshotOnPhone, useBrowser } from '../support/browser';
import { freePort } from '../support/net';
import { pdfText, renderPdf } from '../support/pdf';

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
  const client = await t.api.post('/clients', aClient({ name: 'Grace Client', company: 'Hopper Labs' }));
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
  test('when the client signs on the signing page and the business countersigns, then the contract is signed and the page gives the signed PDF', async () => {
    // Arrange
    const contract = await aContract();
    const page = await ctx.browser.newPage();
    await page.goto(contract.signing_url);
    await screenshot(page, 'sign-page');
    await screenshotOnPhone(ctx.browser, contract.signing_url, 'sign-page');
    const parties = async (role: string) => (await page.getByRole('row', { name: new RegExp(`^${role}`) }).getByRole('cell').innerText()).split('\n');
    const partiesShown = { business: await parties('Business'), client: await parties('Client') };

    // Act
    await page.getByLabel('Full name').fill('Grace Hopper');
    await page.getByRole('checkbox', { name: /^I agree/ }).check();
    await page.getByRole('button', { name: 'Sign' }).click();
    await page.waitForURL(contract.signing_url);
    await screenshot(page, 'sign-page-signed');
    const countersigned = await t.api.post(`/contracts/${contract.id}/countersign`, { name: 'Ada Lovelace' });
    await page.reload();
    await screenshot(page, 'sign-page-both-signed');
    await screenshotOnPhone(ctx.browser, contract.signing_url, 'sign-page-both-signed');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download signed PDF' }).click()]);
    const pdf = await fs.readFile(await download.path());
    await renderPdf(pdf, 'contract-signed-in-browser');
    const text = await pdfText(pdf);

    // Assert
    expect(partiesShown).toEqual({ business: ['Test Business'], client: ['Grace Client', 'Hopper Labs'] });
    expect(countersigned.body.contract.status).toBe('signed');
    expect(download.suggestedFilename()).toBe(`signed-contract-${contract.id}.pdf`);
    expect(text).toMatch(/Client\s+Grace Hopper\s+Signed at\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC\s+IP address\s+\S*127\.0\.0\.1/);
    expect(text).toMatch(/Business\s+Ada Lovelace\s+Signed at/);
    expect(text).toContain(countersigned.body.contract.signatures[0].document_sha256);
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

  test('when the client declines inside the iframe and confirms, then the contract is declined', async () => {
    const contract = await aContract();
    const page = await ctx.browser.newPage();
    await page.goto(`${shopOrigin}/checkout?embed=${encodeURIComponent(contract.embed_url)}`);
    const frame = page.frameLocator('iframe[title="Contract"]');

    await frame.getByRole('button', { name: 'Decline' }).click();
    await frame.getByRole('button', { name: 'Confirm decline' }).waitFor();
    await screenshot(page, 'sign-embed-confirm-decline');
    await frame.getByRole('button', { name: 'Confirm decline' }).click();
    await frame.getByText('This contract was declined').waitFor();
    await screenshot(page, 'sign-embed-declined');

    expect((await t.api.get(`/contracts/${contract.id}`)).body.contract.status).toBe('declined');
    await page.close();
  });

  test('when JavaScript is off and the client presses Decline, then a page asks to confirm; Back changes nothing, Confirm decline declines', async () => {
    // Arrange
    const contract = await aContract();
    const context = await ctx.browser.newContext({ javaScriptEnabled: false });
    const phone = await ctx.browser.newContext({ javaScriptEnabled: false, viewport: PHONE });
    const page = await context.newPage();
    const onPhone = await phone.newPage();
    await page.goto(contract.signing_url);

    // Act
    await page.getByRole('button', { name: 'Decline' }).click();
    // A form's GET with no fields: the address ends in an empty query.
    await page.waitForURL(`${contract.signing_url}/decline?`);
    await screenshot(page, 'sign-confirm-decline');
    await onPhone.goto(`${contract.signing_url}/decline`);
    await screenshot(onPhone, 'sign-confirm-decline-phone');
    const phoneWidth = await onPhone.evaluate(() => document.documentElement.scrollWidth);
    await page.getByRole('link', { name: 'Back to the contract' }).click();
    await page.waitForURL(contract.signing_url);
    const afterBack = (await t.api.get(`/contracts/${contract.id}`)).body.contract.status;
    await page.getByRole('button', { name: 'Decline' }).click();
    await page.getByRole('button', { name: 'Confirm decline' }).click();
    await page.waitForURL(contract.signing_url);
    await screenshot(page, 'sign-page-declined');

    // Assert
    expect(afterBack).toBe('pending');
    expect(phoneWidth).toBeLessThanOrEqual(PHONE.width);
    expect(await page.getByText('This contract was declined').isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Sign' }).count()).toBe(0);
    expect((await t.api.get(`/contracts/${contract.id}`)).body.contract.status).toBe('declined');
    await context.close();
    await phone.close();
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
