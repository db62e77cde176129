/**
 * Stores connected to the server itself: a connect link, WooCommerce's post of the approved keys to
 * our callback (made here as WC_Auth::post_consumer_data makes it), the webhook the server
 * registers, its deliveries turning orders into invoices, the poll that catches what deliveries
 * missed, `woo status`, `woo disconnect` and `woo connect --import`. The browser's side of the
 * approval is in connect-browser.test.ts.
 */
import fs from 'node:fs';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { signatureOf } from '../../plugin/woocommerce/receiver';
import { toDbTime } from '../../server/db/time';
import { startApp, Tenant, TestApp } from '../support/app';
import { requireBuild, runCli } from '../support/cli';
import { eventually } from '../support/eventually';
import { freePort } from '../support/net';
import { registeredEurOrder, startWooStore, WooStore } from '../support/woocommerce';

let app: TestApp;
let store: WooStore;
let owner: Tenant;
let LOCAL: Record<string, string>;

beforeAll(async () => {
  requireBuild();
  // WooCommerce delivers to BASE_URL: the server's address is chosen before it starts.
  const port = await freePort();
  app = await startApp({ port, baseUrl: `http://127.0.0.1:${port}`, rateLimitPerMinute: 100_000 });
  store = await startWooStore();
  owner = await app.tenant({ currency: 'EUR' });
  // The store double is on 127.0.0.1: a private address, refused unless allowed.
  LOCAL = { BASE_URL: app.url, WEBHOOK_ALLOW_PRIVATE: 'true' };
});

afterAll(async () => {
  await store?.stop();
  await app?.stop();
});

/** `woo connect-link` as the owner runs it. */
async function connectLink(args: string[] = []): Promise<{ url: string; token: string; store_url: string | null; callback_url: string; livemode: boolean }> {
  const run = await runCli(app.databaseUrl, ['woo', 'connect-link', '--business', String(owner.businessId), '--mode', 'test', '--json', ...args], LOCAL);
  if (run.code !== 0) throw new Error(`connect-link exited ${run.code}: ${run.stderr}`);
  const link = JSON.parse(run.stdout);
  return { ...link, token: link.url.split('/').pop() };
}

/** What WooCommerce posts once the owner approved: the keys, and the `user_id` it was given. */
function postKeys(userId: string, overrides: Record<string, unknown> = {}): Promise<Response> {
  return fetch(`${app.url}/woocommerce/connect/callback`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': 'WooCommerce/9.8.5 Hookshot (WordPress/6.8.1)' },
    body: JSON.stringify({ key_id: 7, user_id: userId, consumer_key: store.consumerKey, consumer_secret: store.consumerSecret, key_permissions: 'read_write', ...overrides }),
  });
}

function page(url: string, init?: RequestInit): Promise<{ status: number; text: string; location: string | null; headers: Record<string, string> }> {
  return fetch(url, { redirect: 'manual', ...init }).then(async (res) => ({
    status: res.status,
    text: await res.text(),
    location: res.headers.get('location'),
    headers: Object.fromEntries(res.headers),
  }));
}

async function connectedStore(): Promise<{ id: number; store_url: string; webhook_id: number; livemode: boolean; link: string }> {
  const link = await connectLink(['--store-url', `${store.url}/`]);
  expect((await postKeys(link.token)).status).toBe(200);
  const [connected] = await app.server.services.woocommerce.list(owner.businessId);
  return { ...connected, link: link.token };
}

/** An order placed, then completed by the shop: WooCommerce delivers order.updated as it completes. */
function completed(input: ReturnType<typeof registeredEurOrder>) {
  return store.updateOrder(store.addOrder(input).id, { status: 'completed' });
}

/** The order's invoices, once it has one (the order's sync runs after the delivery's answer). */
async function invoicesOf(orderId: number): Promise<any[]> {
  let found: any[] = [];
  await eventually(async () => {
    found = (await owner.api.get(`/invoices?metadata[wc_order_id]=${orderId}`)).body.data;
    return found.length > 0;
  });
  return found;
}

afterEach(async () => {
  for (const connected of await app.server.services.woocommerce.list(owner.businessId)) await app.server.services.woocommerce.disconnect(owner.businessId, connected.id);
});

test('when the owner opens a link made with the store, then the page names the business and the store and leads to WooCommerce\'s approval with our callback', async () => {
  const link = await connectLink(['--store-url', `${store.url}/`]);

  const opened = await page(link.url);

  expect(link.store_url).toBe(store.url);
  expect(opened.status).toBe(200);
  expect(opened.headers).toMatchObject({ 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', 'x-robots-tag': 'noindex', 'x-frame-options': 'DENY' });
  expect(opened.headers['content-security-policy']).toContain("form-action 'self';");
  expect(opened.text).toContain('Test Business');
  expect(opened.text).toContain(store.url);
  const href = /<a class="button" href="([^"]+)">Continue to WooCommerce<\/a>/.exec(opened.text)![1].replaceAll('&amp;', '&');
  const authorize = new URL(href);
  expect(`${authorize.origin}${authorize.pathname}`).toBe(`${store.url}/wc-auth/v1/authorize`);
  expect(Object.fromEntries(authorize.searchParams)).toEqual({
    app_name: 'Invoicing (Test Business)',
    scope: 'read_write',
    user_id: link.token,
    return_url: `${app.url}/woocommerce/connect/${link.token}/done`,
    callback_url: `${app.url}/woocommerce/connect/callback`,
  });
});

test('when a link has no store, then the page asks for its address, refuses one that is not a web address, and offers the approval once given', async () => {
  const link = await connectLink();
  const opened = await page(link.url);
  const formToken = /name="form_token" value="([^"]+)"/.exec(opened.text)![1];
  const post = (storeUrl: string) =>
    page(link.url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: app.url }, body: new URLSearchParams({ form_token: formToken, store_url: storeUrl }).toString() });

  const wrong = await post('shop dot example');
  const bare = await post('127.0.0.1:9');
  const bareLink = await page(link.url);
  const given = await post(store.url);
  const after = await page(link.url);

  expect(opened.text).toContain('Your store&#39;s address');
  expect(wrong.status).toBe(422);
  expect(wrong.text).toContain('This is not a web address');
  expect(wrong.text).toContain('value="shop dot example"');
  expect(bare.status).toBe(303);
  expect(bareLink.text).toContain('https://127.0.0.1:9/wc-auth/v1/authorize?');
  expect(given.status).toBe(303);
  expect(given.location).toBe(`/woocommerce/connect/${link.token}`);
  expect(after.text).toContain(`${store.url}/wc-auth/v1/authorize?`);
});

test('when WooCommerce posts the approved keys, then the store is connected with its webhook at the server, orders delivered become invoices, and the return page names the store', async () => {
  const link = await connectLink(['--store-url', store.url]);

  const callback = await postKeys(link.token);
  const returned = await page(`${link.url}/done?success=1&user_id=${link.token}`);
  const listed = await runCli(app.databaseUrl, ['woo', 'status', '--business', String(owner.businessId), '--json']);
  const [connected] = JSON.parse(listed.stdout);
  const order = completed(registeredEurOrder());

  expect(callback.status).toBe(200);
  expect(returned.text).toContain('Store connected');
  expect(returned.text).toContain(store.url);
  expect(connected).toMatchObject({ store_url: store.url, livemode: false, key_permissions: 'read_write', consumer_key_ending: store.consumerKey.slice(-7) });
  const webhook = store.webhooks.find((w) => w.id === connected.webhook_id)!;
  expect(webhook).toMatchObject({ topic: 'order.updated', status: 'active' });
  expect(webhook.delivery_url).toMatch(new RegExp(`^${app.url}/woocommerce/stores/[0-9a-f]{32}/webhook$`));
  const invoices = await invoicesOf(order.id);
  expect(invoices).toHaveLength(1);
  expect(invoices[0]).toMatchObject({ total: 323.72, currency: 'EUR', metadata: { wc_store: store.url, wc_order_id: String(order.id) } });
});

test('when the callback is posted again, for an unknown link, or with a read-only key, then it is refused and WooCommerce deletes the keys', async () => {
  const link = await connectLink(['--store-url', store.url]);
  const readOnly = await postKeys(link.token, { key_permissions: 'read' });
  const first = await postKeys(link.token);
  const again = await postKeys(link.token);
  const unknown = await postKeys('not-a-link-token-at-all');
  const malformed = await postKeys(link.token, { consumer_secret: 'secret' });

  expect(readOnly.status).toBe(400);
  expect(first.status).toBe(200);
  expect(again.status).toBe(410);
  expect(unknown.status).toBe(404);
  expect(malformed.status).toBe(400);
  expect(JSON.stringify(await malformed.json())).not.toContain(store.consumerKey);
  expect(await app.server.services.woocommerce.list(owner.businessId)).toHaveLength(1);
});

test('when a delivery is not signed with the store\'s secret, then it is refused; a ping is answered', async () => {
  const connected = await connectedStore();
  const deliveryUrl = store.webhooks.find((w) => w.id === connected.webhook_id)!.delivery_url;

  const forged = await fetch(deliveryUrl, { method: 'POST', headers: { 'x-wc-webhook-topic': 'order.updated', 'x-wc-webhook-signature': 'AAAA' }, body: '{"id":1,"status":"completed"}' });
  const ping = await fetch(deliveryUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'webhook_id=9' });

  expect(forged.status).toBe(401);
  expect(ping.status).toBe(200);
});

test('when deliveries were missed, then the store\'s poll finds the order and it is invoiced once', async () => {
  await connectedStore();
  store.setWebhooksPaused(true);
  const order = store.addOrder(registeredEurOrder({ status: 'completed' }));
  store.setWebhooksPaused(false);

  // The poll is due now, as it is every WOO_POLL_SECONDS.
  await app.db.knex('woo_stores').update({ next_attempt_at: app.db.knex.raw('created_at') });
  await app.server.services.woocommerce.polls.drain();
  await app.server.services.woocommerce.orders.drain();

  // Paid at checkout: the invoice is issued, then its payment recorded.
  await eventually(async () => (await invoicesOf(order.id))[0].status === 'paid');
  expect(await invoicesOf(order.id)).toHaveLength(1);
  const row = await app.db.knex('woo_stores').first();
  expect(row.last_polled_at).not.toBeNull();
});

test('when a store is disconnected, then its webhook is deleted at the store, the bridge\'s key is revoked, and it is no longer listed', async () => {
  const connected = await connectedStore();
  const [{ api_key_id: keyId }] = await app.db.knex('woo_stores').where({ id: connected.id });

  const run = await runCli(app.databaseUrl, ['woo', 'disconnect', '--business', String(owner.businessId), '--store', String(connected.id)]);

  expect(run.code).toBe(0);
  expect(run.stdout).toContain('WooCommerce > Settings > Advanced > REST API');
  expect((await postKeys(connected.link)).status).toBe(410);
  expect(store.webhooks.find((w) => w.id === connected.webhook_id)).toBeUndefined();
  expect((await app.server.services.keys.get(keyId)).status).toBe('revoked');
  expect(await app.server.services.woocommerce.list(owner.businessId)).toEqual([]);
});

test('when a separate bridge\'s file is imported, then its webhook delivers to the server and its orders are invoiced there', async () => {
  const bridgeKey = await app.tenant({ businessId: owner.businessId, scopes: ['invoices:write', 'clients:write'] });
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'woo-import-')), 'woocommerce.json');
  const connected = await runCli(app.databaseUrl, [
    'woo', 'connect', '--store-url', store.url, '--consumer-key', store.consumerKey, '--consumer-secret', store.consumerSecret,
    '--api-key', bridgeKey.key, '--api-url', `${app.url}/api/v1/partner`, '--bridge-url', 'http://127.0.0.1:9', '--config', file,
  ]);

  const imported = await runCli(app.databaseUrl, ['woo', 'connect', '--import', file, '--json'], LOCAL);
  const order = completed(registeredEurOrder());

  expect(connected.code).toBe(0);
  expect(imported.code).toBe(0);
  const stored = JSON.parse(imported.stdout);
  expect(stored).toMatchObject({ business_id: owner.businessId, livemode: false, store_url: store.url });
  expect(store.webhooks.find((w) => w.id === stored.webhook_id)!.delivery_url).toMatch(new RegExp(`^${app.url}/woocommerce/stores/`));
  expect(await invoicesOf(order.id)).toHaveLength(1);
});

test('when a store is connected to one business, then another business\'s link for it is refused, and WooCommerce deletes those keys', async () => {
  await connectedStore();
  const other = await app.tenant({ currency: 'EUR' });
  const run = await runCli(app.databaseUrl, ['woo', 'connect-link', '--business', String(other.businessId), '--store-url', store.url, '--json'], LOCAL);
  const token = JSON.parse(run.stdout).url.split('/').pop();

  const refused = await postKeys(token);

  expect(refused.status).toBe(409);
  expect((await refused.json()).message).toContain('connected to another business or mode');
  expect(await app.server.services.woocommerce.list(other.businessId)).toEqual([]);
});

test('when a store\'s address is in a private network and private addresses are not allowed, then no link is made for it', async () => {
  const run = await runCli(app.databaseUrl, ['woo', 'connect-link', '--business', String(owner.businessId), '--store-url', 'http://10.1.2.3', '--json'], { BASE_URL: app.url });

  expect(run.code).toBe(2);
  expect(run.stderr).toContain('--store-url "http://10.1.2.3": http://10.1.2.3 is in a private network');
});

/** Once the order is invoiced and the deliveries of the bridge's own writes to it are worked too. */
async function settled(orderId: number): Promise<void> {
  await invoicesOf(orderId);
  await eventually(async () => {
    await store.settled();
    return (await app.db.knex('woo_order_syncs').where({ order_id: orderId }).first())?.status === 'done';
  });
  await store.settled();
}

/** A delivery of the order as it is now, signed as the store signs it. */
function deliver(orderId: number, webhookId: number): Promise<Response> {
  const webhook = store.webhooks.find((w) => w.id === webhookId)!;
  const body = JSON.stringify(store.orders.find((o) => o.id === orderId));
  return fetch(webhook.delivery_url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-wc-webhook-topic': 'order.updated', 'x-wc-webhook-signature': signatureOf(Buffer.from(body), webhook.secret) },
    body,
  });
}

test('when a delivery comes while its order is being worked on, then the run ends with the order due again rather than done', async () => {
  const connected = await connectedStore();
  const order = completed(registeredEurOrder());
  await settled(order.id);
  // A process has claimed the order's sync, as a sweep does: leased, due again only once its lease ends.
  await app.db.knex('woo_order_syncs').where({ order_id: order.id }).update({ status: 'pending', lease_id: 'held-by-a-run', next_attempt_at: toDbTime(new Date(Date.now() + 300_000)) });
  const claimed = (await app.db.knex('woo_order_syncs').where({ order_id: order.id }).first()) as { id: number };

  const answer = await deliver(order.id, connected.webhook_id);
  const marked = await app.db.knex('woo_order_syncs').where({ order_id: order.id }).first();
  const reads = () => store.requests.filter((r) => r.method === 'GET' && r.path === `/wp-json/wc/v3/orders/${order.id}`).length;
  const readsBefore = reads();
  // That run ends.
  const woocommerce = app.server.services.woocommerce as unknown as { syncOrder(sync: object): Promise<unknown> };
  await woocommerce.syncOrder({ ...claimed, order_id: order.id, woo_store_id: connected.id, lease_id: 'held-by-a-run' });

  expect(answer.status).toBe(202);
  expect(marked).toMatchObject({ lease_id: 'held-by-a-run', status: 'pending' });
  expect(Boolean(Number(marked.again))).toBe(true);
  // The run read the order, and so did the run after it, which the mark made due: then it is done.
  await eventually(async () => (await app.db.knex('woo_order_syncs').where({ order_id: order.id }).first()).status === 'done');
  expect(reads() - readsBefore).toBeGreaterThanOrEqual(2);
  expect(Boolean(Number((await app.db.knex('woo_order_syncs').where({ order_id: order.id }).first()).again))).toBe(false);
});

test('when an order\'s sync ran out of retries, then the store\'s next poll tries it again', async () => {
  await connectedStore();
  const order = completed(registeredEurOrder());
  await settled(order.id);
  await app.db.knex('woo_order_syncs').where({ order_id: order.id }).update({ status: 'failed', attempts: 6, outcome: 'store unreachable' });

  await app.db.knex('woo_stores').update({ next_attempt_at: app.db.knex.raw('created_at') });
  await app.server.services.woocommerce.polls.drain();
  await app.server.services.woocommerce.orders.drain();

  await eventually(async () => (await app.db.knex('woo_order_syncs').where({ order_id: order.id }).first()).status === 'done');
  expect(await app.db.knex('woo_order_syncs').where({ order_id: order.id }).first()).toMatchObject({ status: 'done', attempts: 1 });
});

test('when a connected store answers with a redirect, then the server does not follow it: the poll fails and says why', async () => {
  await connectedStore();
  const elsewhere: string[] = [];
  const target = http.createServer((req, res) => {
    elsewhere.push(req.url ?? '');
    res.end('{}');
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  store.redirectNextRequests(5, `http://127.0.0.1:${(target.address() as AddressInfo).port}/latest/meta-data`);

  await app.db.knex('woo_stores').update({ next_attempt_at: app.db.knex.raw('created_at') });
  await app.server.services.woocommerce.polls.drain();
  await new Promise<void>((resolve) => target.close(() => resolve()));

  expect(elsewhere).toEqual([]);
  expect((await app.db.knex('woo_stores').first()).last_error).toContain('store answered 302');
});
