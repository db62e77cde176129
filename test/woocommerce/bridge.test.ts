/**
 * The WooCommerce bridge end to end: a strict WooCommerce double (OAuth 1.0a over http, signed
 * webhook deliveries), the bridge in this process, and the real partner API on a real database
 * behind a proxy that can inject 429s and outages. `woo connect` runs as the real binary.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WooCommerceRestApi from '@woocommerce/woocommerce-rest-api';
import pino from 'pino';
import { BridgeConfig, readBridgeConfig, savePollCursor } from '../../plugin/woocommerce/config';
import { signatureOf } from '../../plugin/woocommerce/receiver';
import { Bridge } from '../../plugin/woocommerce/runner';
import { startApp, Tenant, TestApp } from '../support/app';
import { requireBuild, runCli } from '../support/cli';
import { freePort } from '../support/net';
import { startProxy, TestProxy } from '../support/proxy';
import { companyOnlyOrder, guestJpyOrder, registeredEurOrder, startWooStore, WooStore } from '../support/woocommerce';

let app: TestApp;
let proxy: TestProxy;
let store: WooStore;
let tenant: Tenant;
let bridge: Bridge;
let running: { port: number; stop: () => Promise<void> };
let configFile: string;
let config: BridgeConfig;
let connectOutput: any;

beforeAll(async () => {
  requireBuild();
  // The bridge's own pace is under test here, not the API's 120-a-minute limit (the 429 test injects its own).
  app = await startApp({ rateLimitPerMinute: 100_000 });
  proxy = await startProxy(app.url);
  store = await startWooStore();
  tenant = await app.tenant({ scopes: ['invoices:write', 'clients:write'] });
  configFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'woo-')), 'woocommerce.json');
  const port = await freePort();
  const connected = await runCli(app.databaseUrl, [
    'woo', 'connect',
    '--store-url', store.url,
    '--consumer-key', store.consumerKey,
    '--consumer-secret', store.consumerSecret,
    '--api-key', tenant.key,
    '--api-url', `${proxy.url}/api/v1/partner`,
    '--bridge-url', `http://127.0.0.1:${port}`,
    '--config', configFile,
    '--json',
  ]);
  if (connected.code !== 0) throw new Error(`woo connect exited ${connected.code}: ${connected.stderr}`);
  connectOutput = JSON.parse(connected.stdout);
  config = readBridgeConfig(configFile);
  bridge = new Bridge(config, pino({ level: process.env.TEST_BRIDGE_LOG ?? 'silent' }), {
    partner: { retries: 3, baseDelayMs: 20, maxDelayMs: 200 },
    saveCursor: (cursor) => savePollCursor(configFile, cursor),
  });
  // The poll runs when a test says so; the schedule here never comes round.
  running = await bridge.start(port, '0 0 1 1 *', '127.0.0.1');
});

afterAll(async () => {
  await running?.stop();
  await store?.stop();
  await proxy?.stop();
  await app?.stop();
});

/** Waits until the store has sent everything and the bridge has finished what it received. */
async function quiet(): Promise<void> {
  for (let round = 0; round < 50; round += 1) {
    const before = store.deliveries.length;
    await store.settled();
    await new Promise((r) => setTimeout(r, 30));
    await bridge.orders.idle();
    if (store.deliveries.length === before) return;
  }
  throw new Error('the store and the bridge did not settle');
}

const invoicesOfOrder = async (orderId: number) =>
  (await app.db.knex('invoices').where({ business_id: tenant.businessId })).filter((i: { notes: string | null }) =>
    (i.notes ?? '').includes(`:order:${orderId}]`),
  );

const metaOf = (orderId: number) => store.orders.find((o) => o.id === orderId)!.meta_data.find((m) => m.key === '_invoicing_invoice_id')?.value;

async function invoiceView(id: number): Promise<any> {
  const res = await tenant.api.get(`/invoices/${id}`);
  expect(res.status).toBe(200);
  return res.body.invoice;
}

/** A delivery as WooCommerce would sign it, sent to the bridge directly. */
function deliver(body: object, topic = 'order.updated', secret = config.webhook_secret): Promise<Response> {
  const raw = Buffer.from(JSON.stringify(body));
  return fetch(`http://127.0.0.1:${running.port}/woocommerce/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-wc-webhook-topic': topic, 'x-wc-webhook-signature': signatureOf(raw, secret) },
    body: raw,
  });
}

describe('woo connect', () => {
  test('when connected, then the store has an order.updated webhook to the bridge and the configuration is private', () => {
    const [webhook] = store.webhooks;

    expect(webhook).toMatchObject({ topic: 'order.updated', status: 'active', delivery_url: `${config.bridge_url}/woocommerce/webhook`, secret: config.webhook_secret });
    expect(config.webhook_secret.length).toBeGreaterThanOrEqual(40);
    expect(fs.statSync(configFile).mode & 0o777).toBe(0o600);
    expect(connectOutput).toMatchObject({ business: { id: tenant.businessId }, livemode: false, webhook: { id: webhook.id, topic: 'order.updated' } });
  });

  test('when the partner key lacks clients:write, then connect refuses before touching the store', async () => {
    const narrow = await app.tenant({ scopes: ['invoices:write'] });
    const webhooks = store.webhooks.length;

    const res = await runCli(app.databaseUrl, [
      'woo', 'connect', '--store-url', store.url, '--consumer-key', store.consumerKey, '--consumer-secret', store.consumerSecret,
      '--api-key', narrow.key, '--api-url', `${app.url}/api/v1/partner`, '--bridge-url', 'http://127.0.0.1:9', '--config', `${configFile}.other`,
    ]);

    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/lacks clients:write/);
    expect(store.webhooks).toHaveLength(webhooks);
    expect(fs.existsSync(`${configFile}.other`)).toBe(false);
  });

  test('when the consumer secret is wrong, then connect says the store refused it', async () => {
    const res = await runCli(app.databaseUrl, [
      'woo', 'connect', '--store-url', store.url, '--consumer-key', store.consumerKey, '--consumer-secret', 'cs_wrong',
      '--api-key', tenant.key, '--api-url', `${app.url}/api/v1/partner`, '--bridge-url', 'http://127.0.0.1:9', '--config', `${configFile}.other`,
    ]);

    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: the store at .*: store answered 401/);
  });
});

describe('receiving deliveries', () => {
  test('when an order is completed, then one invoice with its items and total is sent and recorded on the order', async () => {
    const order = store.addOrder(registeredEurOrder());

    store.updateOrder(order.id, { status: 'completed' });
    await quiet();

    const [row] = await invoicesOfOrder(order.id);
    const invoice = await invoiceView(row.id);
    expect(await invoicesOfOrder(order.id)).toHaveLength(1);
    expect(invoice).toMatchObject({ status: 'sent', currency: 'EUR', total: 323.72, number: expect.stringMatching(/^INV-/) });
    expect(invoice.items.map((i: any) => [i.description, i.quantity, i.unit_price])).toEqual([
      ['Ergonomic chair', 2, 116.91],
      ['Desk lamp', 1, 31.05],
      ['Shipping: Colissimo', 1, 9.9],
      ['Loyalty discount', 1, -5],
      ['Tax: ' + store.orders.find((o) => o.id === order.id)!.tax_lines[0].label, 1, 53.95],
    ]);
    expect(invoice.notes).toContain(`WooCommerce order #${order.number}`);
    expect(metaOf(order.id)).toBe(String(row.id));
    expect(store.notes(order.id).filter((n) => n.note.startsWith('Invoice '))).toHaveLength(1);
    // The meta write and the note each fired order.updated again: they found the meta and did nothing.
    expect(store.deliveries.filter((d) => d.kind !== 'ping' && JSON.parse(d.body).id === order.id).length).toBeGreaterThanOrEqual(2);
    const { client } = (await tenant.api.get(`/clients/${invoice.client_id}`)).body;
    expect(client).toMatchObject({ name: 'Claire Martin', email: 'claire.martin@example.fr' });
  });

  test('when the same signed delivery arrives five times at once, then one invoice is made', async () => {
    store.setWebhooksPaused(true);
    const order = store.updateOrder(store.addOrder(companyOnlyOrder()).id, { status: 'completed' });
    store.setWebhooksPaused(false);

    const answers = await Promise.all(Array.from({ length: 5 }, () => deliver(order)));
    await quiet();

    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202, 202]);
    const invoices = await invoicesOfOrder(order.id);
    expect(invoices).toHaveLength(1);
    expect((await invoiceView(invoices[0].id)).total).toBe(353.97);
    expect(store.notes(order.id).filter((n) => n.note.startsWith('Invoice '))).toHaveLength(1);
  });

  test('when the same signed delivery arrives five times in a row, then one invoice is made', async () => {
    store.setWebhooksPaused(true);
    const order = store.updateOrder(store.addOrder(companyOnlyOrder()).id, { status: 'completed' });
    store.setWebhooksPaused(false);

    for (let i = 0; i < 5; i += 1) {
      expect((await deliver(order)).status).toBe(202);
      await quiet();
    }

    expect(await invoicesOfOrder(order.id)).toHaveLength(1);
    expect(store.notes(order.id).filter((n) => n.note.startsWith('Invoice '))).toHaveLength(1);
  });

  test('when a guest pays in yen, then the invoice is in yen with the order total', async () => {
    const order = store.addOrder(guestJpyOrder());

    store.updateOrder(order.id, { status: 'completed' });
    await quiet();

    const [row] = await invoicesOfOrder(order.id);
    expect(await invoiceView(row.id)).toMatchObject({ currency: 'JPY', total: 7518 });
  });

  test('when the completed-status action is the topic, then its order id alone is enough', async () => {
    store.setWebhooksPaused(true);
    const order = store.updateOrder(store.addOrder(companyOnlyOrder()).id, { status: 'completed' });
    store.setWebhooksPaused(false);

    const answer = await deliver({ action: 'woocommerce_order_status_completed', arg: order.id }, 'action.woocommerce_order_status_completed');
    await quiet();

    expect(answer.status).toBe(202);
    expect(await invoicesOfOrder(order.id)).toHaveLength(1);
  });

  test('when WooCommerce pings the new webhook, then the bridge answers 200', async () => {
    const res = await fetch(`http://127.0.0.1:${running.port}/woocommerce/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'webhook_id=12',
    });

    expect(res.status).toBe(200);
  });

  test('when a delivery is signed with another secret, then it is refused with 401 and nothing is invoiced', async () => {
    store.setWebhooksPaused(true);
    const order = store.updateOrder(store.addOrder(companyOnlyOrder()).id, { status: 'completed' });
    store.setWebhooksPaused(false);

    const answer = await deliver(order, 'order.updated', 'not-the-secret');
    await quiet();

    expect(answer.status).toBe(401);
    expect(await invoicesOfOrder(order.id)).toHaveLength(0);
  });

  test('when a completed order goes back to processing and completes again, then it is not invoiced twice', async () => {
    const order = store.addOrder(companyOnlyOrder());
    store.updateOrder(order.id, { status: 'completed' });
    await quiet();

    store.updateOrder(order.id, { status: 'processing' });
    store.updateOrder(order.id, { status: 'completed' });
    await quiet();

    expect(await invoicesOfOrder(order.id)).toHaveLength(1);
  });

  test('when an invoiced order is refunded in full, then its unpaid invoice is voided', async () => {
    const order = store.addOrder(companyOnlyOrder());
    store.updateOrder(order.id, { status: 'completed' });
    await quiet();

    store.refundOrder(order.id, { amount: '353.97', reason: 'returned' });
    await quiet();

    const [row] = await invoicesOfOrder(order.id);
    expect((await invoiceView(row.id)).status).toBe('void');
    expect(store.notes(order.id).some((n) => /voided/.test(n.note))).toBe(true);
  });

  test('when an invoiced order is cancelled, then its unpaid invoice is voided', async () => {
    const order = store.addOrder(companyOnlyOrder());
    store.updateOrder(order.id, { status: 'completed' });
    await quiet();

    store.updateOrder(order.id, { status: 'cancelled' });
    await quiet();

    const [row] = await invoicesOfOrder(order.id);
    expect((await invoiceView(row.id)).status).toBe('void');
  });
});

describe('outages and missed deliveries', () => {
  test('when a delivery was missed, then the poll invoices the order', async () => {
    store.setWebhooksPaused(true);
    const order = store.updateOrder(store.addOrder(registeredEurOrder()).id, { status: 'completed' });
    store.setWebhooksPaused(false);

    const result = await bridge.poll();
    await quiet();

    expect(result.invoiced).toBeGreaterThanOrEqual(1);
    expect(await invoicesOfOrder(order.id)).toHaveLength(1);
    expect(readBridgeConfig(configFile).poll_cursor).toEqual(expect.any(String));
  });

  test('when the partner API answers 429, then the bridge waits for Retry-After and the order is invoiced once', async () => {
    proxy.fail('POST', '/api/v1/partner/invoices', 1, 429, { 'retry-after': '1' });
    const order = store.addOrder(companyOnlyOrder());
    const started = Date.now();

    store.updateOrder(order.id, { status: 'completed' });
    await quiet();

    const posts = proxy.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/partner/invoices');
    expect(posts.slice(-2).map((r) => r.status)).toEqual([429, 201]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(await invoicesOfOrder(order.id)).toHaveLength(1);
  });

  test('when the partner API is down, then nothing is lost: the next poll invoices the order', async () => {
    proxy.fail('POST', '/api/v1/partner/', 100, 503);
    const order = store.addOrder(companyOnlyOrder());
    store.updateOrder(order.id, { status: 'completed' });
    await quiet();
    expect(await invoicesOfOrder(order.id)).toHaveLength(0);
    expect(metaOf(order.id)).toBeUndefined();
    proxy.recover();

    const result = await bridge.poll();

    expect(result.failed).toBe(0);
    expect(await invoicesOfOrder(order.id)).toHaveLength(1);
  });

  test('when the store disabled the webhook, then the poll enables it again', async () => {
    const [webhook] = store.webhooks;
    await new WooCommerceRestApi({ url: store.url, consumerKey: store.consumerKey, consumerSecret: store.consumerSecret, version: 'wc/v3' }).put(
      `webhooks/${webhook.id}`,
      { status: 'disabled' },
    );

    const result = await bridge.poll();

    expect(result.webhook_reenabled).toBe(true);
    expect(store.webhooks[0].status).toBe('active');
  });

  test('when the store is down, then the poll fails without moving its cursor, and works once it is back', async () => {
    const cursor = readBridgeConfig(configFile).poll_cursor;
    store.setWebhooksPaused(true);
    const order = store.updateOrder(store.addOrder(companyOnlyOrder()).id, { status: 'completed' });
    store.setWebhooksPaused(false);
    await store.down();

    await expect(bridge.poll()).rejects.toThrow(/store unreachable/);
    expect(readBridgeConfig(configFile).poll_cursor).toBe(cursor);

    await store.up();
    await bridge.poll();
    expect(await invoicesOfOrder(order.id)).toHaveLength(1);
  });
});

describe('an order that changes between attempts', () => {
  /** Completes an order whose invoice is created but cannot be sent: the order is left without its mark. */
  async function halfDone(): Promise<{ orderId: number; invoiceId: number }> {
    proxy.fail('POST', '/api/v1/partner/invoices/', 100, 503);
    const order = store.addOrder(companyOnlyOrder({ billing: { company: 'Half Done Ltd', email: `half-${Date.now()}@example.com` } }));
    store.updateOrder(order.id, { status: 'completed' });
    await quiet();
    proxy.recover();
    const [draft] = await invoicesOfOrder(order.id);
    expect(draft.status).toBe('draft');
    expect(metaOf(order.id)).toBeUndefined();
    return { orderId: order.id, invoiceId: draft.id };
  }

  test('when a half-done order is tried again, then its draft is sent rather than a second invoice made', async () => {
    const { orderId, invoiceId } = await halfDone();

    await bridge.orders.handle(orderId);

    expect((await invoicesOfOrder(orderId)).map((i: { id: number; status: string }) => [i.id, i.status])).toEqual([[invoiceId, 'sent']]);
    expect(metaOf(orderId)).toBe(String(invoiceId));
  });

  test('when a half-done order is cancelled, then the invoice it left is voided', async () => {
    const { orderId, invoiceId } = await halfDone();

    store.updateOrder(orderId, { status: 'cancelled' });
    await quiet();

    expect((await invoiceView(invoiceId)).status).toBe('void');
  });

  test('when the billing e-mail changes before the retry, then the order is refused rather than invoiced twice', async () => {
    const { orderId } = await halfDone();
    store.updateOrder(orderId, { billing: { email: 'someone-else@example.com' } });

    const outcome = await bridge.orders.handle(orderId);

    expect(outcome).toEqual({ action: 'refused', reason: expect.stringMatching(/the order changed/) });
    expect(await invoicesOfOrder(orderId)).toHaveLength(1);
  });
});

describe('many missed orders', () => {
  test('when many orders complete at once, then at most four are worked on at a time and all are invoiced', async () => {
    const orders = Array.from({ length: 12 }, () => store.addOrder(companyOnlyOrder()));
    proxy.maxInFlight = 0;

    for (const order of orders) store.updateOrder(order.id, { status: 'completed' });
    await quiet();

    expect(proxy.maxInFlight).toBeGreaterThan(1);
    expect(proxy.maxInFlight).toBeLessThanOrEqual(4);
    for (const order of orders) expect(await invoicesOfOrder(order.id)).toHaveLength(1);
  });

  test('when more than a page of completed orders was missed, then one poll invoices every one of them', async () => {
    store.setWebhooksPaused(true);
    const orders = Array.from({ length: 130 }, (_, i) =>
      store.updateOrder(store.addOrder(companyOnlyOrder({ billing: { company: 'Bulk', email: `bulk-${i % 7}@example.com` } })).id, { status: 'completed' }),
    );
    store.setWebhooksPaused(false);

    const result = await bridge.poll();
    await quiet();

    expect(result.failed).toBe(0);
    const missing = [];
    for (const order of orders) if (!metaOf(order.id)) missing.push(order.id);
    expect(missing).toEqual([]);
    const invoiced = (await app.db.knex('invoices').where({ business_id: tenant.businessId })).filter((i: { notes: string | null }) =>
      orders.some((o) => (i.notes ?? '').includes(`:order:${o.id}]`)),
    );
    expect(invoiced).toHaveLength(130);
  });
});

describe('woo status and woo backfill', () => {
  test('when status is asked, then it shows the webhook and the latest orders with their invoices', async () => {
    const res = await runCli(app.databaseUrl, ['woo', 'status', '--config', configFile, '--json']);

    expect(res.code).toBe(0);
    const status = JSON.parse(res.stdout);
    expect(status).toMatchObject({ store_url: store.url, partner: { ok: true, business_id: tenant.businessId }, webhook: { status: 'active', topic: 'order.updated' } });
    expect(status.orders.length).toBeGreaterThan(0);
    expect(status.orders.some((o: { invoice_id: number | null }) => o.invoice_id !== null)).toBe(true);
  });

  test('when a backfill runs, then completed orders without an invoice get one and invoiced ones are left alone', async () => {
    store.setWebhooksPaused(true);
    const order = store.updateOrder(store.addOrder(guestJpyOrder()).id, { status: 'completed' });
    store.setWebhooksPaused(false);

    const res = await runCli(app.databaseUrl, ['woo', 'backfill', '--since', '2020-01-01', '--config', configFile, '--json']);

    // Orders refused earlier are refused again, as warnings; nothing fails.
    expect(res.stderr).not.toMatch(/"level":50/);
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ invoiced: 1, failed: 0 });
    expect(await invoicesOfOrder(order.id)).toHaveLength(1);
  });
});
