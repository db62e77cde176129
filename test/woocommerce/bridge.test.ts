/**
 * The WooCommerce bridge end to end: a strict WooCommerce double (OAuth 1.0a over http, signed
 * webhook deliveries), the bridge in this process, and the real partner API on a real database
 * behind a proxy that can inject 429s and outages and sees every call the bridge makes. `woo
 * connect` and `woo backfill` run as the real binary.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WooCommerceRestApi from '@woocommerce/woocommerce-rest-api';
import pino from 'pino';
import { BridgeConfig, readBridgeConfig, savePollCursor, writeBridgeConfig } from '../../plugin/woocommerce/config';
import { legacyOrderMarker, orderToInvoice, shopRatesOf } from '../../plugin/woocommerce/mapping';
import { MARKS } from '../../plugin/woocommerce/order';
import { signatureOf } from '../../plugin/woocommerce/receiver';
import { Bridge } from '../../plugin/woocommerce/runner';
import { startApp, Tenant, TestApp } from '../support/app';
import { requireBuild, runCli } from '../support/cli';
import { freePort } from '../support/net';
import { startProxy, TestProxy } from '../support/proxy';
import { companyOnlyOrder, guestJpyOrder, OrderInput, registeredEurOrder, startWooStore, WooOrder, WooStore } from '../support/woocommerce';

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
    // The store keeps its buyers' VAT numbers under a key of its own (the reverse-charge tests use it).
    '--vat-meta-key', '_vat_number',
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

/** Makes a change to the store while its webhooks are paused: the delivery is missed. */
function unseen<T>(change: () => T, on = store): T {
  on.setWebhooksPaused(true);
  try {
    return change();
  } finally {
    on.setWebhooksPaused(false);
  }
}

/** A new order, completed with its delivery missed. */
const completedUnseen = (input: OrderInput, on = store): WooOrder => unseen(() => on.updateOrder(on.addOrder(input).id, { status: 'completed' }), on);

const orderOf = (orderId: number, on = store) => on.orders.find((o) => o.id === orderId)!;

const metaOf = (orderId: number, key: string = MARKS.invoice, on = store) => orderOf(orderId, on).meta_data.find((m) => m.key === key)?.value;

/** The invoices the API finds by the order's metadata, as the bridge looks them up. */
async function invoicesOfOrder(orderId: number): Promise<any[]> {
  const query = new URLSearchParams({ 'metadata[wc_store]': config.store_url, 'metadata[wc_order_id]': String(orderId) });
  const res = await tenant.api.get(`/invoices?${query}`);
  expect(res.status).toBe(200);
  return res.body.data;
}

async function theInvoiceOf(orderId: number): Promise<any> {
  const invoices = await invoicesOfOrder(orderId);
  expect(invoices).toHaveLength(1);
  return invoiceView(invoices[0].id);
}

async function invoiceView(id: number, as = tenant): Promise<any> {
  const res = await as.api.get(`/invoices/${id}`);
  expect(res.status).toBe(200);
  return res.body.invoice;
}

/** The partner API calls made while `work` runs, as `METHOD /path` below the API prefix, without the query. */
async function partnerCallsDuring(work: () => Promise<unknown>): Promise<string[]> {
  const before = proxy.requests.length;
  await work();
  return proxy.requests.slice(before).map((r) => `${r.method} ${r.path.replace('/api/v1/partner', '').replace(/\?.*$/, '')}`);
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

let buyers = 0;
/** The registered EUR fixture, bought by a customer of its own (so the client is made by this order). */
function aRegisteredOrder(): OrderInput {
  buyers += 1;
  const fixture = registeredEurOrder();
  return { ...fixture, customer_id: 1000 + buyers, billing: { ...fixture.billing, email: `claire.${buyers}.${Date.now()}@example.fr` } };
}

/** Our tax rates for the order's shop rates as the bridge finds them again (by their metadata), made through `as` where missing. */
async function rateIdsFor(as: Tenant, order: WooOrder): Promise<Map<number, number>> {
  const ids = new Map<number, number>();
  for (const rate of shopRatesOf(order)) {
    const metadata = { wc_store: config.store_url, wc_tax_rate: rate.key };
    const query = new URLSearchParams({ active: 'true', 'metadata[wc_store]': metadata.wc_store, 'metadata[wc_tax_rate]': metadata.wc_tax_rate });
    const found = (await as.api.get(`/tax-rates?${query}`)).body.data[0];
    ids.set(rate.id, found?.id ?? (await as.api.post('/tax-rates', { display_name: rate.label, percentage: rate.percentage, metadata })).body.tax_rate.id);
  }
  return ids;
}

describe('woo connect', () => {
  test('when connected, then the store has an order.updated webhook to the bridge and the configuration is private', () => {
    const [webhook] = store.webhooks;

    expect(webhook).toMatchObject({ topic: 'order.updated', status: 'active', delivery_url: `${config.bridge_url}/woocommerce/webhook`, secret: config.webhook_secret });
    expect(config.webhook_secret.length).toBeGreaterThanOrEqual(40);
    expect(fs.statSync(configFile).mode & 0o777).toBe(0o600);
    expect(connectOutput).toMatchObject({ business: { id: tenant.businessId }, livemode: false, webhook: { id: webhook.id, topic: 'order.updated' } });
    // A first connection: no earlier bridge made invoices for this store.
    expect(config).toMatchObject({ format: 2 });
    expect(config.legacy_orders_before).toBeUndefined();
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

describe('an order paid at checkout', () => {
  test('when it is completed, then one invoice is issued and paid with the order\'s method and reference, with the shop\'s VAT as a tax rate', async () => {
    // Arrange
    const order = store.addOrder(aRegisteredOrder());
    // Act
    const calls = await partnerCallsDuring(async () => {
      store.updateOrder(order.id, { status: 'completed' });
      await quiet();
    });
    // Assert
    const invoice = await theInvoiceOf(order.id);
    // The shop's 20 % rate becomes one of ours the first time an order uses it (found again by its metadata after).
    expect(calls).toEqual(['GET /tax-rates', 'POST /tax-rates', 'POST /quick-charge', `POST /invoices/${invoice.id}/payments`]);
    expect(invoice).toMatchObject({
      status: 'paid',
      currency: 'EUR',
      total: 323.72,
      amount_due: 0,
      number: expect.stringMatching(/^INV-/),
      metadata: { wc_store: config.store_url, wc_order_id: String(order.id) },
    });
    const [vat] = invoice.tax_breakdown;
    expect(invoice.items.map((i: any) => [i.description, i.quantity, i.unit_price, i.tax_rate_ids])).toEqual([
      ['Ergonomic chair', 2, 116.91, [vat.tax_rate_id]],
      ['Desk lamp', 1, 31.05, [vat.tax_rate_id]],
      ['Shipping: Colissimo', 1, 9.9, [vat.tax_rate_id]],
      ['Loyalty discount', 1, -5, [vat.tax_rate_id]],
    ]);
    // 233.82 + 31.05 + 9.90 − 5.00 = 269.77 at 20 %: the shop's 46.76 + 6.21 + 1.98 − 1.00 = 53.95.
    expect(invoice).toMatchObject({ total_excluding_tax: 269.77, total_tax: 53.95, rounding_amount: 0 });
    expect(invoice.tax_breakdown).toEqual([
      { tax_rate_id: vat.tax_rate_id, display_name: orderOf(order.id).tax_lines[0].label, category: 'S', percentage: 20, inclusive: false, taxable_amount: 269.77, tax_amount: 53.95, exemption_reason: null },
    ]);
    // The customer reads the order number and the coupon, never the bridge's bookkeeping.
    expect(invoice.notes).toBe(`WooCommerce order #${order.number}\nCoupons, already deducted from the lines: welcome10 (−29.43)`);
    expect(invoice.payments).toEqual([
      expect.objectContaining({
        amount: 323.72,
        gateway: 'external',
        method: 'card',
        gateway_reference: 'ch_3PfQ2x2eZvKYlo2C',
        metadata: expect.objectContaining({ wc_order_id: String(order.id), wc_payment_method_title: 'Credit card' }),
      }),
    ]);
    const { client } = (await tenant.api.get(`/clients/${invoice.client_id}`)).body;
    expect(client).toMatchObject({ name: 'Claire Martin', metadata: { wc_store: config.store_url, wc_customer_id: String(orderOf(order.id).customer_id) } });
    expect(metaOf(order.id)).toBe(String(invoice.id));
    expect(metaOf(order.id, MARKS.payment)).toBe(String(invoice.payments[0].id));
    expect(store.notes(order.id).filter((n) => n.note.startsWith('Invoice '))).toEqual([
      expect.objectContaining({ customer_note: false, note: expect.stringMatching(/issued to claire\..*; payment of 323\.72 EUR recorded \(Credit card, ch_3PfQ2x2eZvKYlo2C\)\.$/) }),
    ]);
  });

  test('when the same signed delivery arrives five times at once, then one invoice is made', async () => {
    const order = completedUnseen(companyOnlyOrder());

    const answers = await Promise.all(Array.from({ length: 5 }, () => deliver(order)));
    await quiet();

    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202, 202]);
    expect((await theInvoiceOf(order.id)).total).toBe(353.97);
    expect(store.notes(order.id).filter((n) => n.note.startsWith('Invoice '))).toHaveLength(1);
  });

  test('when the same signed delivery arrives five times in a row, then one invoice is made', async () => {
    const order = completedUnseen(companyOnlyOrder());

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

    expect(await theInvoiceOf(order.id)).toMatchObject({ currency: 'JPY', total: 7518, status: 'paid' });
  });

  test('when the completed-status action is the topic, then its order id alone is enough', async () => {
    const order = completedUnseen(companyOnlyOrder());

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
    const order = completedUnseen(companyOnlyOrder());

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
});

describe('an order paid later', () => {
  test('when a cash-on-delivery order is completed unpaid, then its invoice is e-mailed, and paid once the shop marks it paid', async () => {
    // Arrange
    const order = store.addOrder(guestJpyOrder({ paidOnDelivery: true }));
    const sendCalls = await partnerCallsDuring(async () => {
      store.updateOrder(order.id, { status: 'completed' });
      await quiet();
    });
    const sent = await theInvoiceOf(order.id);
    // Act
    store.markPaid(order.id);
    await quiet();
    // Assert
    expect(sendCalls).toEqual(['POST /quick-charge', `POST /invoices/${sent.id}/send`]);
    expect(sent).toMatchObject({ status: 'sent', amount_due: 7518, payments: [] });
    const paid = await invoiceView(sent.id);
    expect(paid).toMatchObject({ status: 'paid', amount_due: 0 });
    expect(paid.payments).toEqual([expect.objectContaining({ amount: 7518, method: 'cash', gateway: 'external', gateway_reference: order.number })]);
    expect(metaOf(order.id, MARKS.payment)).toBe(String(paid.payments[0].id));
  });
});

describe("the shop's taxes", () => {
  async function invoiced(input: OrderInput): Promise<{ order: WooOrder; invoice: any }> {
    const order = store.addOrder(input);
    store.updateOrder(order.id, { status: 'completed' });
    await quiet();
    return { order: orderOf(order.id), invoice: await theInvoiceOf(order.id) };
  }

  const breakdownOf = (invoice: any) => invoice.tax_breakdown.map((b: any) => [b.display_name, b.category, b.percentage, b.taxable_amount, b.tax_amount]);

  test('when the shop enters prices with tax, then the lines are the totals without it and the invoice totals the order', async () => {
    // 285.00 incl. 19 %: tax round(285 × 19/119) = 45.50, without 239.50; 12.45: tax 1.99, without 10.46.
    const { order, invoice } = await invoiced(companyOnlyOrder({ pricesIncludeTax: true, billing: { company: 'Incl GmbH', email: 'incl@example.com' } }));

    expect(order).toMatchObject({ prices_include_tax: true, total: '297.45', total_tax: '47.49' });
    expect(invoice).toMatchObject({ total: 297.45, total_excluding_tax: 249.96, total_tax: 47.49, rounding_amount: 0, amount_due: 0 });
    expect(invoice.items.map((i: any) => [i.description, i.quantity, i.unit_price])).toEqual([
      ['Consulting hour × 3', 1, 239.5],
      ['Printed manual', 1, 10.46],
    ]);
  });

  test('when the shop rounds tax at subtotal, then each line takes its raw tax rounded and the rounding amount keeps the order total', async () => {
    // Raw 2.3655 twice: the shop's VAT is round(4.731) = 4.73, the lines' 2.37 + 2.37 = 4.74.
    const lines = [
      { name: 'Printed manual', quantity: 1, price: '12.45', taxRate: 19 },
      { name: 'Workbook', quantity: 1, price: '12.45', taxRate: 19 },
    ];
    const { order, invoice } = await invoiced(companyOnlyOrder({ roundTaxAtSubtotal: true, lines, billing: { company: 'Subtotal GmbH', email: 'subtotal@example.com' } }));

    expect(order.line_items[0].taxes).toEqual([{ id: expect.any(Number), total: '2.3655', subtotal: '2.3655' }]);
    expect(order).toMatchObject({ total: '29.63', total_tax: '4.73' });
    expect(invoice).toMatchObject({ total: 29.63, total_tax: 4.74, rounding_amount: -0.01 });
  });

  test('when the shop enters prices with tax and rounds at subtotal, then the invoice still totals the order', async () => {
    // 12.45 incl. 19 %: raw tax 1.987815, 10.462185 without; twice: VAT round(3.97563) = 3.98, total 20.92 + 3.98.
    const lines = [
      { name: 'Printed manual', quantity: 1, price: '12.45', taxRate: 19 },
      { name: 'Workbook', quantity: 1, price: '12.45', taxRate: 19 },
    ];
    const { order, invoice } = await invoiced(companyOnlyOrder({ pricesIncludeTax: true, roundTaxAtSubtotal: true, lines, billing: { company: 'Both GmbH', email: 'both@example.com' } }));

    expect(order.line_items[0]).toMatchObject({ total: '10.46', total_tax: '1.99', taxes: [expect.objectContaining({ total: '1.987815' })] });
    expect(order.total).toBe('24.90');
    expect(invoice).toMatchObject({ total: 24.9, total_excluding_tax: 20.92, total_tax: 3.98, rounding_amount: 0 });
  });

  test('when a yen order has two rates and shipping, then each is a rate of ours, found again for the next order', async () => {
    // Matcha 3 × 1200 at 8 % (288), a cup 2500 and shipping 800 at 10 % (250 + 80).
    const first = await invoiced(guestJpyOrder({ billing: { first_name: 'Aiko', last_name: 'Tanaka', email: 'aiko@example.jp' } }));
    const second = await invoiced(guestJpyOrder({ billing: { first_name: 'Ren', last_name: 'Sato', email: 'ren@example.jp' } }));

    expect(first.invoice).toMatchObject({ currency: 'JPY', total: 7518, total_tax: 618 });
    expect(breakdownOf(first.invoice)).toEqual([
      [first.order.tax_lines[0].label, 'S', 8, 3600, 288],
      [first.order.tax_lines[1].label, 'S', 10, 3300, 330],
    ]);
    expect(second.invoice.tax_breakdown.map((b: any) => b.tax_rate_id)).toEqual(first.invoice.tax_breakdown.map((b: any) => b.tax_rate_id));
    const ours = (await tenant.api.get(`/tax-rates?${new URLSearchParams({ 'metadata[wc_store]': config.store_url, per_page: '100' })}`)).body.data;
    expect(new Set(ours.map((rate: any) => rate.metadata.wc_tax_rate)).size).toBe(ours.length);
  });

  test('when a B2B order has a VAT number and no tax, then it is invoiced under reverse charge and the client gets the VAT number, not a tax status', async () => {
    // Arrange: the buyer is a client already, without a VAT number.
    const email = 'purchasing@atelier-martin.example';
    await tenant.api.post('/clients', { name: 'Atelier Martin', email });
    const lines = [{ name: 'Consulting hour', quantity: 2, price: '95.00' }];
    const meta_data = [{ key: '_vat_number', value: 'FR 40 303 265 045' }];

    // Act
    const { invoice } = await invoiced(companyOnlyOrder({ lines, meta_data, billing: { company: 'Atelier Martin SARL', email, country: 'FR' } }));

    // Assert: the VAT number was found under the key `woo connect --vat-meta-key` saved.
    expect(config.vat_meta_key).toBe('_vat_number');
    expect(invoice).toMatchObject({ tax_exempt: 'reverse', total: 190, total_tax: 0, buyer: expect.objectContaining({ tax_id: 'FR40303265045' }) });
    expect(invoice.tax_breakdown).toEqual([
      expect.objectContaining({ display_name: 'Reverse charge', category: 'AE', percentage: 0, taxable_amount: 190, tax_amount: 0, exemption_reason: 'Reverse charge' }),
    ]);
    const { client } = (await tenant.api.get(`/clients/${invoice.client_id}`)).body;
    expect(client).toMatchObject({ tax_id: 'FR40303265045', tax_exempt: 'none' });
  });

  test('when an order with a VAT number was charged VAT, then it is taxed as the shop taxed it', async () => {
    const meta_data = [{ key: '_vat_number', value: 'DE123456789' }];

    const { invoice } = await invoiced(companyOnlyOrder({ meta_data, billing: { company: 'Domestic GmbH', email: 'domestic@example.com' } }));

    expect(invoice).toMatchObject({ tax_exempt: 'none', total: 353.97, total_tax: 56.52 });
  });

  test('when a line is zero rated and another untaxed, then the first is on a 0 % rate (category Z) and the second on none', async () => {
    const lines = [
      { name: 'Book', quantity: 1, price: '20.00', taxRate: 0 },
      { name: 'Gift wrap', quantity: 1, price: '2.00' },
    ];
    const { invoice } = await invoiced(companyOnlyOrder({ lines, billing: { company: 'Books GmbH', email: 'books@example.com' } }));

    expect(invoice).toMatchObject({ total: 22, total_tax: 0 });
    expect(breakdownOf(invoice)).toEqual([[expect.any(String), 'Z', 0, 20, 0]]);
    expect(invoice.items.map((i: any) => i.tax_rate_ids.length)).toEqual([1, 0]);
  });
});

describe('refunds and cancellations', () => {
  test('when a paid order is refunded in part, twice, then each refund is one credit note that refunds the payment by that amount, and the invoice stays paid', async () => {
    // Arrange
    const order = store.addOrder(companyOnlyOrder());
    store.updateOrder(order.id, { status: 'completed' });
    await quiet();
    // Act
    store.refundOrder(order.id, { amount: '53.97', reason: 'One hour not used' });
    await quiet();
    store.refundOrder(order.id, { amount: '100.00' });
    await quiet();
    await deliver(orderOf(order.id));
    await quiet();
    // Assert
    const invoice = await theInvoiceOf(order.id);
    // 353.97 paid, 153.97 of it refunded and credited: the client owes nothing.
    expect(invoice).toMatchObject({ status: 'paid', amount_paid: 200, amount_credited: 153.97, amount_due: 0 });
    expect(invoice.payments).toEqual([expect.objectContaining({ amount: 353.97, amount_refunded: 153.97 })]);
    const notes = (await tenant.api.get(`/credit-notes?invoice_id=${invoice.id}`)).body.data;
    // Each at the invoice's one rate: 45.35 + 8.62 VAT, 84.03 + 15.97 VAT.
    expect(notes.map((n: any) => [n.total, n.total_tax, n.amount_refunded, n.items[0].description, n.memo])).toEqual([
      [53.97, 8.62, 53.97, `Refund of order #${order.number}`, 'One hour not used'],
      [100, 15.97, 100, `Refund of order #${order.number}`, 'One hour not used'],
    ]);
    expect(store.notes(order.id).filter((n) => /refund of/.test(n.note)).map((n) => n.note.replace(/^Invoice \S+: /, ''))).toEqual([
      `refund of 100 EUR recorded in credit note ${notes[1].number}.`,
      `refund of 53.97 EUR recorded in credit note ${notes[0].number}.`,
    ]);
  });

  test('when a paid order is refunded in full, then a credit note refunds its payment and voids its invoice', async () => {
    // Arrange
    const order = store.addOrder(companyOnlyOrder());
    store.updateOrder(order.id, { status: 'completed' });
    await quiet();
    // Act
    store.refundOrder(order.id, { amount: '353.97', reason: 'returned' });
    await quiet();
    // Assert
    const invoice = await theInvoiceOf(order.id);
    expect(invoice).toMatchObject({ status: 'void', amount_paid: 0, amount_credited: 353.97 });
    // A full refund credits every line: the credit note's VAT is the invoice's.
    const [note] = (await tenant.api.get(`/credit-notes?invoice_id=${invoice.id}`)).body.data;
    expect(note).toMatchObject({ total: 353.97, total_tax: 56.52, amount_refunded: 353.97 });
    expect(note.items.map((item: any) => item.invoice_item_id)).toEqual(invoice.items.map((item: any) => item.id));
    expect(invoice.payments).toEqual([expect.objectContaining({ amount_refunded: 353.97, status: 'refunded' })]);
    expect(store.notes(order.id).some((n) => /refund of 353\.97 EUR recorded in credit note CN-\d{6}\.$/.test(n.note))).toBe(true);
    expect(metaOf(order.id, MARKS.voided)).toBe('yes');
  });

  test('when an unpaid order is cancelled, then its invoice is voided', async () => {
    // Arrange
    const order = store.addOrder(guestJpyOrder({ paidOnDelivery: true }));
    store.updateOrder(order.id, { status: 'completed' });
    await quiet();
    // Act
    store.updateOrder(order.id, { status: 'cancelled' });
    await quiet();
    // Assert
    expect((await theInvoiceOf(order.id)).status).toBe('void');
    expect(metaOf(order.id, MARKS.voided)).toBe('yes');
  });

  test('when a paid order is cancelled without a refund, then its invoice stays paid and the shop owner is told why, once', async () => {
    // Arrange
    const order = store.addOrder(companyOnlyOrder());
    store.updateOrder(order.id, { status: 'completed' });
    await quiet();
    // Act
    store.updateOrder(order.id, { status: 'cancelled' });
    await quiet();
    await deliver(orderOf(order.id));
    await quiet();
    // Assert
    expect((await theInvoiceOf(order.id)).status).toBe('paid');
    expect(store.notes(order.id).filter((n) => n.note.startsWith('Invoicing refused'))).toEqual([
      expect.objectContaining({ customer_note: false, note: expect.stringMatching(/the order is cancelled but invoice INV-\d+ has 353\.97 EUR paid: refund the order in WooCommerce/) }),
    ]);
  });
});

describe('refused orders', () => {
  test('when an order has no billing e-mail, then the shop owner gets one private note saying why, however often the order is seen', async () => {
    // Arrange
    const order = store.addOrder(companyOnlyOrder({ billing: { company: 'No Mail Ltd', email: '' } }));
    // Act
    store.updateOrder(order.id, { status: 'completed' });
    await quiet();
    await deliver(orderOf(order.id));
    await quiet();
    await bridge.poll();
    // Assert
    expect(store.notes(order.id).filter((n) => n.note.startsWith('Invoicing refused'))).toEqual([
      expect.objectContaining({ customer_note: false, note: 'Invoicing refused: the order has no billing e-mail to send the invoice to.' }),
    ]);
    expect(metaOf(order.id)).toBeUndefined();
  });
});

describe('outages and missed deliveries', () => {
  test('when a delivery was missed, then the poll invoices the order', async () => {
    const order = completedUnseen(registeredEurOrder());

    const result = await bridge.poll();
    await quiet();

    expect(result.invoiced).toBeGreaterThanOrEqual(1);
    expect(await invoicesOfOrder(order.id)).toHaveLength(1);
    expect(readBridgeConfig(configFile).poll_cursor).toEqual(expect.any(String));
  });

  test('when a cancellation\'s delivery was missed, then the poll voids the unpaid invoice', async () => {
    const order = store.addOrder(guestJpyOrder({ paidOnDelivery: true }));
    store.updateOrder(order.id, { status: 'completed' });
    await quiet();
    unseen(() => store.updateOrder(order.id, { status: 'cancelled' }));

    const result = await bridge.poll();

    expect(result).toMatchObject({ failed: 0, voided: expect.any(Number) });
    expect(result.voided).toBeGreaterThanOrEqual(1);
    expect((await theInvoiceOf(order.id)).status).toBe('void');
  });

  test('when a refund\'s delivery was missed, then the poll refunds the payment', async () => {
    const order = store.addOrder(companyOnlyOrder());
    store.updateOrder(order.id, { status: 'completed' });
    await quiet();
    unseen(() => store.refundOrder(order.id, { amount: '50.00' }));

    const result = await bridge.poll();

    expect(result.refunded).toBeGreaterThanOrEqual(1);
    expect((await theInvoiceOf(order.id)).payments).toEqual([expect.objectContaining({ amount_refunded: 50 })]);
  });

  test('when the delivery of a later payment was missed, then the poll records it', async () => {
    const order = store.addOrder(guestJpyOrder({ paidOnDelivery: true }));
    store.updateOrder(order.id, { status: 'completed' });
    await quiet();
    unseen(() => store.markPaid(order.id, { transaction_id: 'till-4711' }));

    const result = await bridge.poll();

    expect(result.paid).toBeGreaterThanOrEqual(1);
    expect((await theInvoiceOf(order.id)).payments).toEqual([expect.objectContaining({ amount: 7518, gateway_reference: 'till-4711' })]);
  });

  test('when the partner API answers 429, then the bridge waits for Retry-After and the order is invoiced once', async () => {
    proxy.fail('POST', '/api/v1/partner/quick-charge', 1, 429, { 'retry-after': '1' });
    const order = store.addOrder(companyOnlyOrder());
    const started = Date.now();

    store.updateOrder(order.id, { status: 'completed' });
    await quiet();

    const posts = proxy.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/partner/quick-charge');
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
    expect((await theInvoiceOf(order.id)).status).toBe('paid');
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
    const order = completedUnseen(companyOnlyOrder());
    await store.down();

    await expect(bridge.poll()).rejects.toThrow(/store unreachable/);
    expect(readBridgeConfig(configFile).poll_cursor).toBe(cursor);

    await store.up();
    await bridge.poll();
    expect(await invoicesOfOrder(order.id)).toHaveLength(1);
  });
});

describe('a run that stopped half-way', () => {
  /**
   * What a run that stopped right after making the invoice leaves behind: the order marked as
   * attempted, and an invoice with the order's metadata made by the same quick-charge, but no mark
   * of the invoice on the order.
   */
  async function interruptedAfterTheInvoice(input: OrderInput): Promise<{ order: WooOrder; invoiceId: number }> {
    const order = unseen(() => store.updateOrder(store.addOrder(input).id, { status: 'completed', meta_data: [{ key: MARKS.attempt, value: new Date().toISOString() }] }));
    const { client, currency, items, rounding_amount, notes, metadata } = orderToInvoice(order, { url: config.store_url, id: config.store_id }, await rateIdsFor(tenant, order));
    const made = await tenant.api.post('/quick-charge', { client, currency, items, rounding_amount, notes, metadata });
    expect(made.status).toBe(201);
    return { order, invoiceId: made.body.invoice.id };
  }

  test('when the payment could not be recorded, then the next run records it on the same invoice', async () => {
    proxy.fail('POST', '/api/v1/partner/invoices/', 100, 503);
    const order = store.addOrder(companyOnlyOrder());
    store.updateOrder(order.id, { status: 'completed' });
    await quiet();
    proxy.recover();
    const [issued] = await invoicesOfOrder(order.id);
    expect(issued.status).toBe('sent');
    expect(metaOf(order.id, MARKS.payment)).toBeUndefined();

    const calls = await partnerCallsDuring(() => bridge.orders.handle(order.id));

    expect(calls).toEqual([`POST /invoices/${issued.id}/payments`]);
    expect((await theInvoiceOf(order.id)).status).toBe('paid');
  });

  test('when a run stopped after making the invoice, then the next finds it by its metadata instead of making a second', async () => {
    const { order, invoiceId } = await interruptedAfterTheInvoice(companyOnlyOrder());

    const calls = await partnerCallsDuring(() => bridge.orders.handle(order.id));

    expect(calls).toEqual(['GET /invoices', `POST /invoices/${invoiceId}/payments`]);
    expect((await invoicesOfOrder(order.id)).map((i) => [i.id, i.status])).toEqual([[invoiceId, 'paid']]);
    expect(metaOf(order.id)).toBe(String(invoiceId));
  });

  test('when an order whose run stopped is cancelled, then the invoice it left is voided', async () => {
    const { order, invoiceId } = await interruptedAfterTheInvoice(guestJpyOrder({ paidOnDelivery: true }));

    store.updateOrder(order.id, { status: 'cancelled' });
    await quiet();

    expect((await invoiceView(invoiceId)).status).toBe('void');
  });

  test('when the billing e-mail changes before the retry, then the invoice made for the order is kept rather than a second made', async () => {
    const { order, invoiceId } = await interruptedAfterTheInvoice(companyOnlyOrder({ billing: { company: 'Moving Ltd', email: `moving-${Date.now()}@example.com` } }));
    unseen(() => store.updateOrder(order.id, { billing: { email: 'someone-else@example.com' } }));

    const outcome = await bridge.orders.handle(order.id);

    expect(outcome).toMatchObject({ action: 'updated', invoice_id: invoiceId, changes: ['invoiced', 'paid'] });
    expect(await invoicesOfOrder(order.id)).toHaveLength(1);
  });
});

describe('an upgrade from the earlier bridge', () => {
  /** An invoice as the earlier bridge made it: the client by e-mail, then a draft whose notes carry the order's marker, then (if it got that far) sent. */
  async function invoicedByTheEarlierBridge(as: Tenant, order: WooOrder, storeId: string, got: 'draft' | 'sent'): Promise<any> {
    const { client, currency, issue_date, items, rounding_amount, notes } = orderToInvoice(order, { url: 'unused', id: storeId }, await rateIdsFor(as, order));
    const made = await as.api.post('/clients', { name: client.name, email: client.email });
    const draft = await as.api.post('/invoices', { client_id: made.body.client.id, currency, issue_date, items, rounding_amount, notes: `${notes}\n${legacyOrderMarker(storeId, order)}` });
    expect(draft.status).toBe(201);
    return got === 'sent' ? (await as.api.post(`/invoices/${draft.body.invoice.id}/send`)).body.invoice : draft.body.invoice;
  }

  test('when a store invoiced by the earlier bridge is upgraded, then its invoices are recognised, paid, and no order is invoiced twice', async () => {
    // Arrange: the earlier bridge's configuration (no format), one order it finished, one it stopped on before marking it.
    const shop = await startWooStore();
    try {
      const earlier = await app.tenant({ scopes: ['invoices:write', 'clients:write'] });
      const storeId = 'a1b2c3d4e5f6';
      const file = path.join(path.dirname(configFile), 'earlier-bridge.json');
      writeBridgeConfig(file, {
        store_url: shop.url,
        consumer_key: shop.consumerKey,
        consumer_secret: shop.consumerSecret,
        api_url: `${app.url}/api/v1/partner`,
        api_key: earlier.key,
        bridge_url: 'https://bridge.example.com',
        store_id: storeId,
        webhook_id: 1,
        webhook_secret: 'the earlier bridge\'s secret',
        connected_at: new Date(Date.now() - 86_400_000).toISOString(),
      });
      const finished = shop.updateOrder(shop.addOrder(registeredEurOrder()).id, { status: 'completed' });
      const stopped = shop.updateOrder(shop.addOrder(companyOnlyOrder()).id, { status: 'completed' });
      const finishedInvoice = await invoicedByTheEarlierBridge(earlier, finished, storeId, 'sent');
      const stoppedInvoice = await invoicedByTheEarlierBridge(earlier, stopped, storeId, 'draft');
      shop.updateOrder(finished.id, { meta_data: [{ key: MARKS.invoice, value: String(finishedInvoice.id) }] });
      // Act
      const res = await runCli(app.databaseUrl, ['woo', 'backfill', '--since', '2020-01-01', '--config', file, '--json']);
      // Assert
      expect(res.code).toBe(0);
      expect(JSON.parse(res.stdout)).toMatchObject({ checked: 2, invoiced: 1, paid: 2, failed: 0 });
      const invoices = (await earlier.api.get('/invoices?per_page=100')).body.data;
      expect(invoices.map((i: { id: number }) => i.id).sort()).toEqual([finishedInvoice.id, stoppedInvoice.id].sort());
      expect(invoices.map((i: { status: string }) => i.status)).toEqual(['paid', 'paid']);
      expect(metaOf(stopped.id, MARKS.invoice, shop)).toBe(String(stoppedInvoice.id));
      expect(readBridgeConfig(file)).toMatchObject({ format: 2, legacy_orders_before: expect.any(String) });
    } finally {
      await shop.stop();
    }
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
    const orders = Array.from({ length: 130 }, (_, i) => completedUnseen(companyOnlyOrder({ billing: { company: 'Bulk', email: `bulk-${i % 7}@example.com` } })));

    const result = await bridge.poll();
    await quiet();

    expect(result.failed).toBe(0);
    const missing = [];
    for (const order of orders) if (!metaOf(order.id)) missing.push(order.id);
    expect(missing).toEqual([]);
    for (const order of orders) expect(await invoicesOfOrder(order.id)).toHaveLength(1);
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
    const order = completedUnseen(guestJpyOrder());

    const res = await runCli(app.databaseUrl, ['woo', 'backfill', '--since', '2020-01-01', '--config', configFile, '--json']);

    // Orders refused earlier are refused again, as warnings; nothing fails.
    expect(res.stderr).not.toMatch(/"level":50/);
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ invoiced: 1, paid: 1, failed: 0 });
    expect(await invoicesOfOrder(order.id)).toHaveLength(1);
  });
});
