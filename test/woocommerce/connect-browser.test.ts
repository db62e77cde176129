/**
 * A shop owner connects a store as they would: a link from `invoicing woo connect-link`, our page,
 * WooCommerce's own sign-in and approval (the double's WC_Auth), back to our page; in a real browser,
 * against `invoicing serve` processes on one database behind a load balancer at BASE_URL: three on
 * MariaDB, one on the embedded database, which is for one process (README, "Running several
 * processes"). The store's orders are then invoiced exactly once, whichever process gets each delivery.
 */
import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { signatureOf } from '../../plugin/woocommerce/receiver';
import { loadConfig } from '../../server/config';
import { Database } from '../../server/db/database';
import { createServices, Services } from '../../server/services';
import { startBalancer, Balancer } from '../support/balancer';
import { screenshot, screenshotOnPhone, useBrowser } from '../support/browser';
import { requireBuild, runCli } from '../support/cli';
import { scratchDatabase, ScratchDatabase, testDriver } from '../support/database';
import { eventually } from '../support/eventually';
import { Api } from '../support/http';
import { freePort } from '../support/net';
import { serveProcess, ServedProcess, stopped } from '../support/serve';
import { registeredEurOrder, startWooStore, WooStore } from '../support/woocommerce';

const APP_SECRET_KEY = randomBytes(32).toString('base64');
const PROCESSES = testDriver() === 'mysql' ? 3 : 1;
const ctx = useBrowser();

let scratch: ScratchDatabase;
let db: Database;
let services: Services;
let processes: ServedProcess[];
let balancer: Balancer;
let store: WooStore;
let baseUrl: string;
let businessId: number;
let api: Api;

beforeAll(async () => {
  requireBuild();
  scratch = await scratchDatabase({ migrated: true });
  db = Database.open(scratch.url);
  await db.migrate();
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  // The store double is on 127.0.0.1, a private address: allowed here as for local development.
  const env = { DATABASE_URL: scratch.url, APP_SECRET_KEY, BASE_URL: baseUrl, WEBHOOK_ALLOW_PRIVATE: 'true', LOG_LEVEL: 'silent', WEBHOOK_SWEEP_SECONDS: '1', RATE_LIMIT_PER_MINUTE: '100000' };
  processes = await Promise.all(Array.from({ length: PROCESSES }, () => serveProcess(env)));
  balancer = await startBalancer(processes.map((p) => new URL(p.api).origin), port);
  // Real WooCommerce posts keys only to an https callback; this one runs over http on 127.0.0.1.
  store = await startWooStore({ allowHttpCallback: true });
  services = createServices(db, loadConfig({ DATABASE_URL: scratch.url, APP_SECRET_KEY, BASE_URL: baseUrl }));
  businessId = (await services.businesses.create({ name: 'Atelier Lumière', currency: 'EUR', country: 'FR' })).id;
  api = new Api(baseUrl, (await services.keys.create({ businessId, mode: 'live', scopes: ['invoices:read'] })).key);
}, 60_000);

afterAll(async () => {
  for (const { child } of processes ?? []) {
    child.kill('SIGTERM');
    await stopped(child);
  }
  await balancer?.stop();
  await store?.stop();
  await db?.close();
  await scratch?.drop();
});

async function connectLink(...args: string[]): Promise<string> {
  const run = await runCli(scratch.url, ['woo', 'connect-link', '--business', String(businessId), '--json', ...args], { APP_SECRET_KEY, BASE_URL: baseUrl, WEBHOOK_ALLOW_PRIVATE: 'true' });
  if (run.code !== 0) throw new Error(`connect-link exited ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout).url;
}

/** WooCommerce's sign-in, as the store's administrator. */
async function signIn(page: Page): Promise<void> {
  await page.getByLabel(/username/i).fill(store.adminUsername);
  await page.getByLabel(/password/i).fill(store.adminPassword);
  await page.getByRole('button', { name: /log ?in/i }).click();
}

test('when the owner opens a link without a store, gives its address and approves in WooCommerce, then our page names the store, and its orders are invoiced once by every process', async () => {
  const link = await connectLink();
  const page = await ctx.browser.newPage();
  try {
    await page.goto(link);
    await screenshot(page, 'woo-connect-address');
    await screenshotOnPhone(ctx.browser, link, 'woo-connect-address');
    await page.getByLabel('Your store\'s address').fill('my shop');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('alert').waitFor();
    await screenshot(page, 'woo-connect-address-refused');
    await page.getByLabel('Your store\'s address').fill(`${store.url}/`);
    await page.getByRole('button', { name: 'Continue' }).click();
    await screenshot(page, 'woo-connect-store');
    await screenshotOnPhone(ctx.browser, link, 'woo-connect-store');
    await page.getByRole('link', { name: 'Continue to WooCommerce' }).click();
    await screenshot(page, 'woo-wordpress-sign-in');
    await signIn(page);
    await screenshot(page, 'woo-wordpress-approve');
    await page.getByRole('link', { name: 'Approve' }).click();

    await page.getByRole('heading', { name: 'Store connected' }).waitFor();
    await screenshot(page, 'woo-connected');
    await screenshotOnPhone(ctx.browser, page.url(), 'woo-connected');
    expect(await page.textContent('body')).toContain(`${store.url} is connected to Atelier Lumière.`);
  } finally {
    await page.close();
  }

  const [connected] = await services.woocommerce.list(businessId);
  expect(connected).toMatchObject({ store_url: store.url, livemode: true, key_permissions: 'read_write' });
  const orders = Array.from({ length: 6 }, (_, i) => {
    const placed = store.addOrder(registeredEurOrder({ billing: { ...registeredEurOrder().billing, email: `buyer${i}@example.fr` } }));
    return store.updateOrder(placed.id, { status: 'completed' });
  });
  // The same delivery reaching every process at once (WooCommerce sends order.updated for each save): one sync.
  const webhook = store.webhooks[0];
  const last = JSON.stringify(store.orders.find((o) => o.id === orders[orders.length - 1].id));
  const headers = { 'content-type': 'application/json', 'x-wc-webhook-topic': 'order.updated', 'x-wc-webhook-signature': signatureOf(Buffer.from(last), webhook.secret) };
  const answers = await Promise.all(processes.map((p) => fetch(`${new URL(p.api).origin}${new URL(webhook.delivery_url).pathname}`, { method: 'POST', headers, body: last })));
  expect(answers.map((a) => a.status)).toEqual(processes.map(() => 202));
  await eventually(async () => (await api.get('/invoices?per_page=100')).body.data.length >= orders.length, 30_000);
  // Whatever our own writes to the orders delivered again has been worked too.
  await eventually(async () => {
    await store.settled();
    return (await db.knex('woo_order_syncs').whereNot({ status: 'done' }).count({ n: '*' }))[0].n == 0;
  }, 30_000);

  const invoices = (await api.get('/invoices?per_page=100')).body.data;
  expect(invoices.map((i: { metadata: { wc_order_id: string } }) => i.metadata.wc_order_id).sort()).toEqual(orders.map((o) => String(o.id)).sort());
  for (const order of orders) expect(store.notes(order.id).filter((n) => n.note.startsWith('Invoice '))).toHaveLength(1);
  // Every process took part: deliveries and the connect flow were spread over the three.
  expect([...balancer.served.values()].every((n) => n > 0)).toBe(true);
}, 90_000);

test('when the owner denies access in WooCommerce, then our page says nothing was connected and offers the link again', async () => {
  const link = await connectLink('--store-url', store.url, '--mode', 'test');
  const page = await ctx.browser.newPage();
  try {
    await page.goto(link);
    await page.getByRole('link', { name: 'Continue to WooCommerce' }).click();
    if (await page.getByLabel(/username/i).count()) await signIn(page);
    await page.getByRole('link', { name: 'Deny' }).click();

    await page.getByRole('heading', { name: 'Store not connected' }).waitFor();
    await screenshot(page, 'woo-denied');
    await screenshotOnPhone(ctx.browser, page.url(), 'woo-denied');
    expect(await page.textContent('body')).toContain('You did not approve the connection in WooCommerce');
    expect(await page.getByRole('link', { name: 'Try again' }).getAttribute('href')).toBe(new URL(link).pathname);
  } finally {
    await page.close();
  }
  expect((await services.woocommerce.list(businessId)).filter((s) => !s.livemode)).toEqual([]);
});
