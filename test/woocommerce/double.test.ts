import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import http, { IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import { AddressInfo } from 'node:net';
import WooCommerceRestApi from '@woocommerce/woocommerce-rest-api';
import { screenshot, useBrowser } from '../support/browser';
import { testDriver } from '../support/database';
import { companyOnlyOrder, guestJpyOrder, registeredEurOrder, startWooStore, WooOrder, WooStore } from '../support/woocommerce';
import { selfSignedCertificate } from '../support/woocommerce/tls';

const API = '/wp-json/wc/v3';

// ---------------------------------------------------------------------------------------------
// A reference OAuth 1.0a signer, written from RFC 5849 §3.4 (not from the double's verifier):
// the base string is METHOD & enc(base URI) & enc(sorted, encoded name=value pairs), the key is
// enc(consumer secret) & enc(token secret), and there is no token in WooCommerce's one-legged flow.

/** RFC 3986 percent-encoding: only ALPHA / DIGIT / "-" / "." / "_" / "~" stay as they are. */
const enc = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

interface Signing {
  key: string;
  secret: string;
  method?: string;
  signatureMethod?: 'HMAC-SHA1' | 'HMAC-SHA256';
  nonce?: string;
  timestamp?: number;
}

function oauthSigned(url: string, s: Signing): string {
  const u = new URL(url);
  const oauth: Record<string, string> = {
    oauth_consumer_key: s.key,
    oauth_nonce: s.nonce ?? randomBytes(16).toString('hex'),
    oauth_signature_method: s.signatureMethod ?? 'HMAC-SHA256',
    oauth_timestamp: String(s.timestamp ?? Math.floor(Date.now() / 1000)),
    oauth_version: '1.0',
  };
  const pairs = [...u.searchParams.entries(), ...Object.entries(oauth)]
    .map(([k, v]) => [enc(k), enc(v)])
    .sort(([ka, va], [kb, vb]) => (ka < kb ? -1 : ka > kb ? 1 : va < vb ? -1 : va > vb ? 1 : 0));
  const base = [(s.method ?? 'GET').toUpperCase(), enc(`${u.origin}${u.pathname}`), enc(pairs.map(([k, v]) => `${k}=${v}`).join('&'))].join('&');
  const algorithm = oauth.oauth_signature_method === 'HMAC-SHA1' ? 'sha1' : 'sha256';
  const signature = createHmac(algorithm, `${enc(s.secret)}&`).update(base).digest('base64');
  for (const [k, v] of Object.entries({ ...oauth, oauth_signature: signature })) u.searchParams.set(k, v);
  return u.toString();
}

function signedFor(store: WooStore, path: string, extra: Partial<Signing> = {}): string {
  return oauthSigned(`${store.url}${API}${path}`, { key: store.consumerKey, secret: store.consumerSecret, ...extra });
}

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

async function json(res: Response): Promise<{ status: number; headers: Headers; body: any }> {
  return { status: res.status, headers: res.headers, body: await res.json() };
}

/** An HTTPS request trusting the store's own certificate (fetch cannot be given a CA without undici). */
function httpsGet(url: string, ca: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    https
      .get(url, { ca, headers, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
      })
      .on('error', reject);
  });
}

// ---------------------------------------------------------------------------------------------
// A delivery receiver that keeps raw bytes: WooCommerce signs the bytes, and pings are not JSON.

interface Received {
  headers: IncomingHttpHeaders;
  raw: string;
}

async function startHookReceiver() {
  const received: Received[] = [];
  let status = 200;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, raw: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/woo`,
    received,
    payloads: () => received.filter((r) => r.headers['x-wc-webhook-topic']),
    answer: (s: number) => {
      status = s;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
type HookReceiver = Awaited<ReturnType<typeof startHookReceiver>>;

/** The receiving side's check, from WooCommerce's documentation: base64 HMAC-SHA256 of the raw body. */
function signatureValid(hook: Received, secret: string): boolean {
  const expected = Buffer.from(createHmac('sha256', secret).update(hook.raw, 'utf8').digest('base64'));
  const given = Buffer.from(String(hook.headers['x-wc-webhook-signature'] ?? ''));
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** A money string to integer minor units, checking it carries exactly the currency's decimals. */
const cents = (amount: string, decimals: number) => {
  const [whole, frac = ''] = amount.replace('-', '').split('.');
  expect(frac.length).toBe(decimals);
  return (amount.startsWith('-') ? -1 : 1) * Number(whole + frac);
};

describe('WooCommerce REST API double', () => {
  let store: WooStore;
  afterEach(async () => {
    await store?.stop();
  });

  describe('authentication over plain HTTP (OAuth 1.0a, one-legged)', () => {
    beforeEach(async () => {
      store = await startWooStore();
      store.addOrder(registeredEurOrder());
    });

    test.each(['HMAC-SHA256', 'HMAC-SHA1'] as const)('when a request is signed with %s, then it is answered', async (signatureMethod) => {
      // Act
      const res = await json(await fetch(signedFor(store, '/orders?per_page=5', { signatureMethod })));
      // Assert
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(1);
      expect(res.headers.get('x-wp-total')).toBe('1');
      expect(store.requests.at(-1)).toMatchObject({ method: 'GET', path: `${API}/orders`, auth: 'oauth1', status: 200 });
    });

    test('when the @woocommerce/woocommerce-rest-api client reads and writes over http, then its signatures are accepted', async () => {
      // Arrange
      const client = new WooCommerceRestApi({ url: store.url, consumerKey: store.consumerKey, consumerSecret: store.consumerSecret, version: 'wc/v3' });
      const [order] = store.orders;
      // Act
      const listed = await client.get('orders', { status: 'processing', modified_after: '2000-01-01T00:00:00Z', per_page: 20 });
      const updated = await client.put(`orders/${order.id}`, { meta_data: [{ key: '_invoice_number', value: 'INV-000001' }] });
      // Assert
      expect(listed.status).toBe(200);
      expect(listed.data.map((o: WooOrder) => o.id)).toEqual([order.id]);
      expect(updated.data.meta_data).toEqual([expect.objectContaining({ key: '_invoice_number', value: 'INV-000001' })]);
      expect(store.requests.map((r) => r.auth)).toEqual(['oauth1', 'oauth1']);
    });

    test('when the client signs parameters with spaces, plus signs, brackets and non-ASCII text, then the signature still matches', async () => {
      // Arrange
      const client = new WooCommerceRestApi({ url: store.url, consumerKey: store.consumerKey, consumerSecret: store.consumerSecret, version: 'wc/v3' });
      // Act
      const res = await client.get('orders', { search: 'Café + crème/brûlée 100%', filter: { period: 'week' }, status: 'any' });
      // Assert
      expect(res.status).toBe(200);
      expect(store.requests.at(-1)?.query).toMatchObject({ search: 'Café + crème/brûlée 100%', filter: { period: 'week' } });
    });

    test('when Basic credentials are sent over http, then WooCommerce does not read them and answers 401', async () => {
      // Act
      const res = await json(await fetch(`${store.url}${API}/orders`, { headers: { Authorization: basic(store.consumerKey, store.consumerSecret) } }));
      // Assert
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ code: 'woocommerce_rest_cannot_view', message: 'Sorry, you cannot list resources.', data: { status: 401 } });
      expect(store.requests.at(-1)?.auth).toBe('basic');
    });

    test('when the request is signed with a wrong secret, then the signature is refused', async () => {
      // Act
      const res = await json(await fetch(signedFor(store, '/orders', { secret: `cs_${'0'.repeat(40)}` })));
      // Assert
      expect(res.status).toBe(401);
      expect(res.body).toEqual({
        code: 'woocommerce_rest_authentication_error',
        message: 'Invalid signature - provided signature does not match.',
        data: { status: 401 },
      });
    });

    test('when a signed query is changed after signing, then the signature is refused', async () => {
      // Arrange
      const url = new URL(signedFor(store, '/orders?per_page=5'));
      url.searchParams.set('per_page', '100');
      // Act
      const res = await json(await fetch(url));
      // Assert
      expect(res.status).toBe(401);
      expect(res.body.message).toBe('Invalid signature - provided signature does not match.');
    });

    test('when a signed request is replayed, then its nonce is refused the second time', async () => {
      // Arrange
      const url = signedFor(store, '/orders');
      // Act
      const first = await fetch(url);
      const replay = await json(await fetch(url));
      // Assert
      expect(first.status).toBe(200);
      expect(replay.status).toBe(401);
      expect(replay.body).toEqual({ code: 'woocommerce_rest_authentication_error', message: 'Invalid nonce - nonce has already been used.', data: { status: 401 } });
    });

    test('when the timestamp is more than 15 minutes old, then the request is refused', async () => {
      // Act
      const res = await json(await fetch(signedFor(store, '/orders', { timestamp: Math.floor(Date.now() / 1000) - 16 * 60 })));
      // Assert
      expect(res.status).toBe(401);
      expect(res.body.message).toBe('Invalid timestamp.');
    });

    test('when only some OAuth parameters are sent, then WooCommerce names the missing ones', async () => {
      // Act
      const res = await json(await fetch(`${store.url}${API}/orders?oauth_consumer_key=${store.consumerKey}`));
      // Assert
      expect(res.status).toBe(401);
      expect(res.body).toEqual({
        code: 'woocommerce_rest_authentication_missing_parameter',
        message: 'Missing OAuth parameters oauth_timestamp, oauth_nonce, oauth_signature, oauth_signature_method',
        data: { status: 401 },
      });
    });
  });

  describe('authentication over HTTPS', () => {
    beforeEach(async () => {
      store = await startWooStore({ https: true });
      store.addOrder(guestJpyOrder());
    });

    test('when Basic credentials are sent over https, then they are accepted', async () => {
      // Act
      const res = await httpsGet(`${store.url}${API}/orders`, store.ca!, { Authorization: basic(store.consumerKey, store.consumerSecret) });
      // Assert
      expect(store.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(1);
      expect(store.requests.at(-1)).toMatchObject({ auth: 'basic', status: 200 });
    });

    test('when the @woocommerce/woocommerce-rest-api client uses https, then its Basic credentials are accepted', async () => {
      // Arrange
      const client = new WooCommerceRestApi({
        url: store.url,
        consumerKey: store.consumerKey,
        consumerSecret: store.consumerSecret,
        version: 'wc/v3',
        axiosConfig: { httpsAgent: new https.Agent({ ca: store.ca }) },
      });
      // Act
      const res = await client.get('system_status');
      // Assert
      expect(res.status).toBe(200);
      expect(res.data.environment.site_url).toBe(store.url);
      expect(res.data.settings.currency).toBe('EUR');
    });

    test('when the Basic secret is wrong, then WooCommerce says the consumer secret is invalid', async () => {
      // Act
      const res = await httpsGet(`${store.url}${API}/orders`, store.ca!, { Authorization: basic(store.consumerKey, 'cs_wrong') });
      // Assert
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ code: 'woocommerce_rest_authentication_error', message: 'Consumer secret is invalid.', data: { status: 401 } });
    });

    test('when the keys are passed as consumer_key and consumer_secret in the query, then they are accepted', async () => {
      // Act
      const res = await httpsGet(`${store.url}${API}/orders?consumer_key=${store.consumerKey}&consumer_secret=${store.consumerSecret}`, store.ca!, {});
      // Assert
      expect(res.status).toBe(200);
      expect(store.requests.at(-1)?.auth).toBe('query');
    });
  });

  describe('orders', () => {
    beforeEach(async () => {
      store = await startWooStore({ utcOffsetMinutes: 120 });
    });

    /** Every money field that sums into the order total, re-added in minor units. */
    function expectTotalsToAddUp(order: WooOrder, decimals: number) {
      const m = (s: string) => cents(s, decimals);
      const lines = order.line_items.reduce((sum, l) => sum + m(l.total), 0);
      const shipping = order.shipping_lines.reduce((sum, s) => sum + m(s.total), 0);
      const fees = order.fee_lines.reduce((sum, f) => sum + m(f.total), 0);
      const itemTaxes = [...order.line_items, ...order.fee_lines].reduce((sum, i) => sum + m(i.total_tax), 0);
      const shippingTaxes = order.shipping_lines.reduce((sum, s) => sum + m(s.total_tax), 0);
      expect(m(order.cart_tax)).toBe(itemTaxes);
      expect(m(order.shipping_tax)).toBe(shippingTaxes);
      expect(m(order.shipping_total)).toBe(shipping);
      expect(m(order.total_tax)).toBe(itemTaxes + shippingTaxes);
      expect(order.tax_lines.reduce((sum, t) => sum + m(t.tax_total) + m(t.shipping_tax_total), 0)).toBe(m(order.total_tax));
      expect(m(order.total)).toBe(lines + shipping + fees + m(order.total_tax));
    }

    test('when the registered EUR fixture is added, then its coupon, fee, shipping and 20 % taxes add up to 323.72', () => {
      // Act
      const order = store.addOrder(registeredEurOrder());
      // Assert
      expect(order).toMatchObject({
        status: 'processing',
        currency: 'EUR',
        customer_id: 42,
        discount_total: '29.43',
        discount_tax: '5.89',
        shipping_total: '9.90',
        shipping_tax: '1.98',
        cart_tax: '51.97',
        total_tax: '53.95',
        total: '323.72',
        prices_include_tax: false,
      });
      expect(order.line_items.map((l) => [l.subtotal, l.subtotal_tax, l.total, l.total_tax, l.price])).toEqual([
        ['259.80', '51.96', '233.82', '46.76', 116.91],
        ['34.50', '6.90', '31.05', '6.21', 31.05],
      ]);
      expect(order.fee_lines).toEqual([expect.objectContaining({ name: 'Loyalty discount', total: '-5.00', total_tax: '-1.00', tax_status: 'taxable' })]);
      expect(order.coupon_lines).toEqual([expect.objectContaining({ code: 'welcome10', discount: '29.43', discount_tax: '5.89' })]);
      expect(order.tax_lines).toEqual([expect.objectContaining({ tax_total: '51.97', shipping_tax_total: '1.98', rate_percent: 20, compound: false })]);
      // Line taxes are stored as PHP prints floats, not padded to the currency's decimals.
      expect(order.line_items[0].taxes).toEqual([{ id: order.tax_lines[0].rate_id, total: '46.76', subtotal: '51.96' }]);
      expectTotalsToAddUp(order, 2);
    });

    test('when the guest JPY fixture is added, then amounts have no decimals and two tax rates give 7518', () => {
      // Act
      const order = store.addOrder(guestJpyOrder());
      // Assert
      expect(order).toMatchObject({ customer_id: 0, currency: 'JPY', cart_tax: '538', shipping_tax: '80', total_tax: '618', total: '7518', discount_total: '0' });
      expect(order.tax_lines.map((t) => [t.rate_percent, t.tax_total, t.shipping_tax_total])).toEqual([
        [8, '288', '0'],
        [10, '250', '80'],
      ]);
      expect(order._links).not.toHaveProperty('customer');
      expectTotalsToAddUp(order, 0);
    });

    test('when the company-only fixture is added, then the billing has no names and the half-cent tax rounds up to 353.97', () => {
      // Act
      const order = store.addOrder(companyOnlyOrder());
      // Assert
      expect(order.billing).toMatchObject({ first_name: '', last_name: '', company: 'Acme Consulting GmbH', country: 'DE' });
      expect(order.line_items.map((l) => l.total_tax)).toEqual(['54.15', '2.37']);
      expect(order).toMatchObject({ cart_tax: '56.52', total_tax: '56.52', shipping_total: '0.00', total: '353.97' });
      expectTotalsToAddUp(order, 2);
    });

    test('when orders are listed with modified_after and per_page, then only later changes come back, counted in the headers', async () => {
      // Arrange
      const old = new Date(Date.now() - 3_600_000);
      const [a, b, c] = [1, 2, 3].map(() => store.addOrder(companyOnlyOrder({ date_created: old })));
      store.updateOrder(b.id, { status: 'completed' });
      store.updateOrder(c.id, { status: 'completed' });
      const since = new Date(old.getTime() + 1000).toISOString();
      // Act
      const page1 = await json(await fetch(signedFor(store, `/orders?modified_after=${since}&per_page=1&orderby=id&order=asc`)));
      const page2 = await json(await fetch(signedFor(store, `/orders?modified_after=${since}&per_page=1&orderby=id&order=asc&page=2`)));
      // Assert
      expect(page1.body.map((o: WooOrder) => o.id)).toEqual([b.id]);
      expect(page2.body.map((o: WooOrder) => o.id)).toEqual([c.id]);
      expect(page1.headers.get('x-wp-total')).toBe('2');
      expect(page1.headers.get('x-wp-totalpages')).toBe('2');
      expect(page1.headers.get('link')).toContain('rel="next"');
      expect(store.orders.find((o) => o.id === a.id)?.status).toBe('processing');
    });

    test('when an order is read, then local dates are in the site zone and the _gmt ones in UTC', async () => {
      // Arrange
      const created = new Date('2025-06-01T10:00:00Z');
      const { id } = store.addOrder(registeredEurOrder({ date_created: created }));
      // Act
      const res = await json(await fetch(signedFor(store, `/orders/${id}`)));
      // Assert
      expect(res.body).toMatchObject({ date_created: '2025-06-01T12:00:00', date_created_gmt: '2025-06-01T10:00:00' });
    });

    test('when per_page is over 100, then WordPress refuses the parameter', async () => {
      // Act
      const res = await json(await fetch(signedFor(store, '/orders?per_page=101')));
      // Assert
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, params: { per_page: expect.any(String) } } });
    });

    test('when an order is refunded in full, then it lists the refund as a negative total and becomes refunded', () => {
      // Arrange
      const { id } = store.addOrder(guestJpyOrder());
      // Act
      const order = store.refundOrder(id, { amount: '7518', reason: 'Damaged in transit' });
      // Assert
      expect(order.refunds).toEqual([{ id: expect.any(Number), reason: 'Damaged in transit', total: '-7518' }]);
      expect(order.status).toBe('refunded');
      expect(order.total).toBe('7518');
    });

    test('when an order is refunded in part, then it stays completed and lists the refund', () => {
      // Arrange
      const { id } = store.addOrder(companyOnlyOrder({ status: 'completed' }));
      // Act
      const order = store.refundOrder(id, { amount: '53.97' });
      // Assert
      expect(order).toMatchObject({ status: 'completed', refunds: [{ reason: '', total: '-53.97' }] });
    });

    test('when an order reaches processing, then WooCommerce stamps date_paid once, and completing it keeps that date', () => {
      // Arrange
      const { id } = store.addOrder(companyOnlyOrder({ status: 'pending' }));
      // Act
      const processing = store.updateOrder(id, { status: 'processing' });
      const completed = store.updateOrder(id, { status: 'completed' });
      // Assert
      expect(processing.date_paid_gmt).toEqual(expect.any(String));
      expect(completed.date_paid_gmt).toBe(processing.date_paid_gmt);
    });

    test('when a cash-on-delivery order completes, then it has no date_paid until the store marks it paid', () => {
      // Arrange
      const { id } = store.addOrder(guestJpyOrder({ paidOnDelivery: true }));
      // Act
      const completed = store.updateOrder(id, { status: 'completed' });
      const paid = store.markPaid(id);
      // Assert
      expect(completed).toMatchObject({ status: 'completed', date_paid: null, date_paid_gmt: null, payment_method: 'cod' });
      expect(paid.date_paid_gmt).toEqual(expect.any(String));
      expect(Date.parse(`${paid.date_modified_gmt}Z`)).toBeGreaterThanOrEqual(Date.parse(`${completed.date_modified_gmt}Z`));
    });

    test('when orders are listed with several statuses, then only orders in those come back', async () => {
      // Arrange
      const [completed, cancelled, processing] = [1, 2, 3].map(() => store.addOrder(companyOnlyOrder()));
      store.updateOrder(completed.id, { status: 'completed' });
      store.updateOrder(cancelled.id, { status: 'cancelled' });
      // Act
      const commas = await json(await fetch(signedFor(store, '/orders?status=completed,cancelled&orderby=id&order=asc')));
      const unknown = await json(await fetch(signedFor(store, '/orders?status=completed,shipped')));
      // Assert
      expect(commas.body.map((o: WooOrder) => o.id)).toEqual([completed.id, cancelled.id]);
      expect(commas.body.map((o: WooOrder) => o.id)).not.toContain(processing.id);
      expect(unknown).toMatchObject({ status: 400, body: { code: 'rest_invalid_param', data: { params: { status: expect.any(String) } } } });
    });

    test('when the API key may only read, then a write is refused before it reaches the order', async () => {
      // Arrange
      await store.stop();
      store = await startWooStore({ permissions: 'read' });
      const { id } = store.addOrder(companyOnlyOrder());
      // Act
      const res = await json(
        await fetch(signedFor(store, `/orders/${id}`, { method: 'PUT' }), {
          method: 'PUT',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ status: 'completed' }),
        }),
      );
      // Assert
      expect(res.status).toBe(401);
      expect(res.body.message).toBe('The API key provided does not have write permissions.');
      expect(store.orders[0].status).toBe('processing');
    });

    test('when a route does not exist, then the answer is rest_no_route', async () => {
      // Act
      const res = await json(await fetch(signedFor(store, '/invoices')));
      // Assert
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ code: 'rest_no_route', message: 'No route was found matching the URL and request method.', data: { status: 404 } });
    });

    test('when meta is PUT twice with the same key, then it is merged by key, like WooCommerce', async () => {
      // Arrange
      const { id } = store.addOrder(registeredEurOrder({ meta_data: [{ key: '_other', value: 'kept' }] }));
      const put = (value: string) =>
        fetch(signedFor(store, `/orders/${id}`, { method: 'PUT' }), {
          method: 'PUT',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ meta_data: [{ key: '_invoice_id', value }] }),
        });
      // Act
      await put('1');
      const res = await json(await put('2'));
      // Assert
      expect(res.status).toBe(200);
      expect(res.body.meta_data.map((m: { key: string; value: string }) => [m.key, m.value])).toEqual([
        ['_other', 'kept'],
        ['_invoice_id', '2'],
      ]);
    });
  });

  describe('webhooks', () => {
    let receiver: HookReceiver;
    const SECRET = 'wh-secret-0123456789';

    beforeEach(async () => {
      receiver = await startHookReceiver();
      store = await startWooStore();
    });
    afterEach(async () => {
      await store?.stop();
      await receiver?.stop();
    });

    async function createWebhook(topic: string) {
      const res = await fetch(signedFor(store, '/webhooks', { method: 'POST' }), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'Bridge', topic, delivery_url: receiver.url, secret: SECRET }),
      });
      return json(res);
    }

    test('when a webhook is created, then it is answered 201 without its secret and the delivery URL got a form-encoded ping', async () => {
      // Act
      const created = await createWebhook('order.updated');
      // Assert
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ id: expect.any(Number), status: 'active', topic: 'order.updated', resource: 'order', event: 'updated', delivery_url: receiver.url });
      expect(created.body.hooks).toContain('woocommerce_update_order');
      expect(created.body).not.toHaveProperty('secret');
      expect(receiver.received).toHaveLength(1);
      expect(receiver.received[0].raw).toBe(`webhook_id=${created.body.id}`);
      expect(receiver.received[0].headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(receiver.received[0].headers['user-agent']).toMatch(/^WooCommerce\/[\d.]+ Hookshot \(WordPress\/[\d.]+\)$/);
    });

    test('when an order meta is PUT, then order.updated arrives with the full order and a valid base64 signature of the raw body', async () => {
      // Arrange
      const { id } = store.addOrder(registeredEurOrder());
      const hook = (await createWebhook('order.updated')).body;
      // Act
      await fetch(signedFor(store, `/orders/${id}`, { method: 'PUT' }), {
        method: 'PUT',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ meta_data: [{ key: '_invoice_number', value: 'INV-000042' }] }),
      });
      await store.settled();
      // Assert
      const [delivery] = receiver.payloads();
      expect(receiver.payloads()).toHaveLength(1);
      expect(signatureValid(delivery, SECRET)).toBe(true);
      expect(signatureValid(delivery, 'another-secret')).toBe(false);
      expect(delivery.headers).toMatchObject({
        'content-type': 'application/json',
        'x-wc-webhook-source': `${store.url}/`,
        'x-wc-webhook-topic': 'order.updated',
        'x-wc-webhook-resource': 'order',
        'x-wc-webhook-event': 'updated',
        'x-wc-webhook-id': String(hook.id),
        'x-wc-webhook-delivery-id': expect.stringMatching(/^[0-9a-f]{32}$/),
      });
      // PHP's json_encode escapes '/', so only the raw bytes verify, never a re-serialised body.
      expect(delivery.raw).toContain('\\/wp-json\\/wc\\/v3\\/orders');
      const body = JSON.parse(delivery.raw);
      expect(body).toMatchObject({ id, total: '323.72', meta_data: [expect.objectContaining({ key: '_invoice_number', value: 'INV-000042' })] });
      expect(store.deliveries.at(-1)).toMatchObject({ kind: 'payload', status: 200, webhookId: hook.id });
    });

    test('when an order becomes completed, then the action topic delivers the action name and the order ID', async () => {
      // Arrange
      const { id } = store.addOrder(guestJpyOrder());
      await createWebhook('action.woocommerce_order_status_completed');
      // Act
      store.updateOrder(id, { status: 'completed' });
      await store.settled();
      // Assert
      const [delivery] = receiver.payloads();
      expect(JSON.parse(delivery.raw)).toEqual({ action: 'woocommerce_order_status_completed', arg: id });
      expect(delivery.headers).toMatchObject({ 'x-wc-webhook-resource': 'action', 'x-wc-webhook-event': 'woocommerce_order_status_completed' });
      expect(store.orders[0].date_completed).not.toBeNull();
      expect(store.notes(id)[0].note).toBe('Order status changed from Processing to Completed.');
    });

    test('when a note is added through the API, then it is answered 201 and order.updated fires for the order', async () => {
      // Arrange
      const { id } = store.addOrder(companyOnlyOrder());
      await createWebhook('order.updated');
      // Act
      const res = await json(
        await fetch(signedFor(store, `/orders/${id}/notes`, { method: 'POST' }), {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ note: 'Invoice INV-000007 issued.' }),
        }),
      );
      await store.settled();
      // Assert
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ note: 'Invoice INV-000007 issued.', customer_note: false, author: 'system' });
      expect(store.notes(id).map((n) => n.note)).toContain('Invoice INV-000007 issued.');
      expect(receiver.payloads().map((d) => JSON.parse(d.raw).id)).toEqual([id]);
    });

    test('when webhooks are paused, then the change is made but nothing is delivered', async () => {
      // Arrange
      const { id } = store.addOrder(registeredEurOrder());
      await createWebhook('order.updated');
      store.setWebhooksPaused(true);
      // Act
      store.updateOrder(id, { status: 'completed' });
      await store.settled();
      // Assert
      expect(store.orders[0].status).toBe('completed');
      expect(receiver.payloads()).toHaveLength(0);
    });

    test('when deliveries keep failing, then failure_count climbs to 6 and the 7th failure disables the webhook', async () => {
      // Arrange
      const { id } = store.addOrder(registeredEurOrder());
      const hook = (await createWebhook('order.updated')).body;
      receiver.answer(500);
      let attempt = 0;
      const failOnce = async () => {
        store.updateOrder(id, { customer_note: `attempt ${++attempt}` });
        await store.settled();
      };
      // Act
      for (let i = 0; i < 6; i++) await failOnce();
      const afterSix = store.webhooks[0];
      await failOnce();
      const afterSeven = store.webhooks[0];
      await failOnce();
      // Assert
      expect(afterSix).toMatchObject({ status: 'active', failure_count: 6 });
      expect(afterSeven).toMatchObject({ status: 'disabled', failure_count: 6 });
      expect(receiver.payloads()).toHaveLength(7);
      const listed = await json(await fetch(signedFor(store, `/webhooks/${hook.id}`)));
      expect(listed.body.status).toBe('disabled');
    });

    test('when a disabled webhook is re-enabled with PUT, then it delivers again and a success resets its failure count', async () => {
      // Arrange
      const { id } = store.addOrder(registeredEurOrder());
      const hook = (await createWebhook('order.updated')).body;
      receiver.answer(503);
      for (let i = 0; i < 7; i++) {
        store.updateOrder(id, { customer_note: String(i) });
        await store.settled();
      }
      receiver.answer(200);
      // Act
      const res = await json(
        await fetch(signedFor(store, `/webhooks/${hook.id}`, { method: 'PUT' }), {
          method: 'PUT',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ status: 'active' }),
        }),
      );
      store.updateOrder(id, { status: 'completed' });
      await store.settled();
      // Assert
      expect(res.body.status).toBe('active');
      expect(store.webhooks[0]).toMatchObject({ status: 'active', failure_count: 0 });
      expect(JSON.parse(receiver.payloads().at(-1)!.raw).status).toBe('completed');
    });
  });

  describe('store failures', () => {
    beforeEach(async () => {
      store = await startWooStore();
    });

    test('when the next requests are made to fail with 503, then they get an HTML error page and later ones succeed', async () => {
      // Arrange
      store.failNextRequests(2, 503);
      // Act
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await fetch(signedFor(store, '/orders'))).status);
      // Assert
      expect(statuses).toEqual([503, 503, 200]);
      expect(store.requests.map((r) => r.status)).toEqual([503, 503, 200]);
    });

    test('when the store is down, then connections are refused until it is up again', async () => {
      // Arrange
      await store.down();
      // Act
      const whileDown = await fetch(signedFor(store, '/orders')).then(
        () => 'answered',
        (e: Error & { cause?: { code?: string } }) => e.cause?.code,
      );
      await store.up();
      const afterUp = await fetch(signedFor(store, '/orders'));
      // Assert
      expect(whileDown).toBe('ECONNREFUSED');
      expect(afterUp.status).toBe(200);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// WooCommerce's app authorization (WC_Auth): what an app's "connect your store" link goes through.

/** The connecting app: its callback_url records the key WooCommerce POSTs, its return_url is a page to land on. */
async function startAppDouble() {
  const callbacks: { headers: IncomingHttpHeaders; raw: string }[] = [];
  let callbackStatus = 200;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/callback') {
        callbacks.push({ headers: req.headers, raw: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(callbackStatus).end();
      } else {
        res.writeHead(200, { 'Content-Type': 'text/html' }).end('<h1>Back at the app</h1>');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    callbackUrl: `${url}/callback`,
    returnUrl: `${url}/return?store=1`,
    callbacks,
    answerCallback: (status: number) => {
      callbackStatus = status;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
type AppDouble = Awaited<ReturnType<typeof startAppDouble>>;

const onSqlite = testDriver() === 'sqlite' ? describe : describe.skip;

onSqlite('WooCommerce app authorization (/wc-auth/v1), on SQLite only: no database is involved', () => {
  const ctx = useBrowser();
  let store: WooStore;
  let app: AppDouble;
  beforeEach(async () => {
    app = await startAppDouble();
    // Our callback runs over plain http on 127.0.0.1, which WooCommerce itself would refuse.
    store = await startWooStore({ allowHttpCallback: true });
    store.addOrder(registeredEurOrder());
  });
  afterEach(async () => {
    await store?.stop();
    await app?.stop();
  });

  /** The link an app sends the owner to, as WooCommerce documents it. */
  const authorizeUrl = (params: Record<string, string> = {}) =>
    `${store.url}/wc-auth/v1/authorize?${new URLSearchParams({
      app_name: 'Acme Invoicing',
      scope: 'read_write',
      user_id: '42',
      return_url: app.returnUrl,
      callback_url: app.callbackUrl,
      ...params,
    })}`;

  /** Signs in through wp-login.php, as a script would; the logged_in cookie to send back. */
  async function signInCookie(): Promise<string> {
    const res = await fetch(`${store.url}/wp-login.php`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ log: store.adminUsername, pwd: store.adminPassword, redirect_to: authorizeUrl() }),
    });
    expect(res.status).toBe(302);
    return res.headers.get('set-cookie')!.split(';')[0];
  }

  /** The grant-access page's Approve link, for a signed-in owner. */
  async function approveLink(cookie: string, url = authorizeUrl()): Promise<string> {
    const html = await (await fetch(url, { headers: { cookie } })).text();
    return /<a href="([^"]+)" class="button button-primary wc-auth-approve">/.exec(html)![1].replace(/&#038;/g, '&');
  }

  /** Opens the authorize link in the browser and signs in on WooCommerce's own form. */
  async function signInInBrowser(url = authorizeUrl(), password = store.adminPassword) {
    const page = await ctx.browser.newPage();
    await page.goto(url);
    await page.getByLabel('Username or email address').fill(store.adminUsername);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Login' }).click();
    await page.waitForLoadState();
    return page;
  }

  test('when the owner signs in and approves in the browser, then the callback gets the key, the key reads orders and the owner returns with success=1', async () => {
    // Arrange
    const page = await ctx.browser.newPage();
    try {
      await page.goto(authorizeUrl());
      const signInHeading = await page.locator('.wc-auth-content h1').textContent();
      await screenshot(page, 'woocommerce-auth-sign-in');
      await page.getByLabel('Username or email address').fill(store.adminUsername);
      await page.getByLabel('Password').fill(store.adminPassword);
      await page.getByRole('button', { name: 'Login' }).click();
      await page.waitForURL((u) => u.pathname === '/wc-auth/v1/authorize/');
      await screenshot(page, 'woocommerce-auth-grant-access');
      const grant = {
        intro: await page.locator('.wc-auth-content > p').first().textContent(),
        permissions: await page.locator('.wc-auth-permissions li').allTextContents(),
        signedIn: await page.locator('.wc-auth-logged-in-as').textContent(),
      };
      // Act
      await page.getByRole('link', { name: 'Approve' }).click();
      await page.waitForURL((u) => u.pathname === '/return');
      // Assert
      expect(signInHeading?.trim()).toBe('Acme Invoicing would like to connect to your store');
      expect(grant.intro?.trim()).toBe('This will give "Acme Invoicing" Read/Write access which will allow it to:');
      expect(grant.permissions).toEqual([
        'Create webhooks', 'View and manage coupons', 'View and manage customers', 'View and manage orders and sales reports', 'View and manage products',
      ]);
      expect(grant.signedIn).toContain(`Logged in as ${store.adminUsername}`);
      const returned = new URL(page.url());
      expect([...returned.searchParams]).toEqual([['store', '1'], ['success', '1'], ['user_id', '42']]);

      expect(app.callbacks).toHaveLength(1);
      expect(app.callbacks[0].headers['content-type']).toBe('application/json;charset=UTF-8');
      const sent = JSON.parse(app.callbacks[0].raw);
      expect(sent).toEqual({
        key_id: 2,
        user_id: '42',
        consumer_key: expect.stringMatching(/^ck_[0-9a-f]{40}$/),
        consumer_secret: expect.stringMatching(/^cs_[0-9a-f]{40}$/),
        key_permissions: 'read_write',
      });
      expect(Object.keys(sent)).toEqual(['key_id', 'user_id', 'consumer_key', 'consumer_secret', 'key_permissions']);
      expect(store.apiKeys[1]).toEqual({
        id: 2,
        description: expect.stringMatching(/^Acme Invoicing - API \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\)$/),
        userId: 1,
        permissions: 'read_write',
        truncatedKey: sent.consumer_key.slice(-7),
        exists: true,
      });
      expect(store.callbacks).toMatchObject([{ url: app.callbackUrl, body: app.callbacks[0].raw, keyId: 2, status: 200 }]);

      const orders = await fetch(oauthSigned(`${store.url}${API}/orders`, { key: sent.consumer_key, secret: sent.consumer_secret }));
      expect(orders.status).toBe(200);
      expect(await orders.json()).toHaveLength(1);
    } finally {
      await page.close();
    }
  });

  test('when the password is wrong, then WooCommerce\'s sign-in form comes back with WordPress\'s error, and the right one goes on', async () => {
    // Act
    const page = await signInInBrowser(authorizeUrl(), 'not the password');
    try {
      const error = await page.locator('.woocommerce-error').textContent();
      const stillSigningIn = new URL(page.url()).pathname;
      const keptUsername = await page.getByLabel('Username or email address').inputValue();
      await page.getByLabel('Password').fill(store.adminPassword);
      await page.getByRole('button', { name: 'Login' }).click();
      await page.waitForURL((u) => u.pathname === '/wc-auth/v1/authorize/');
      // Assert
      expect(error?.trim()).toBe(`Error: The password you entered for the username ${store.adminUsername} is incorrect. Lost your password?`);
      expect(stillSigningIn).toBe('/wc-auth/v1/login/');
      expect(keptUsername).toBe(store.adminUsername);
      expect(await page.getByRole('link', { name: 'Approve' }).count()).toBe(1);
    } finally {
      await page.close();
    }
  });

  test('when the owner denies, then the browser returns with success=0 and no key is made', async () => {
    // Arrange
    const page = await signInInBrowser();
    try {
      // Act
      await page.getByRole('link', { name: 'Deny' }).click();
      await page.waitForURL((u) => u.pathname === '/return');
      // Assert
      expect([...new URL(page.url()).searchParams]).toEqual([['store', '1'], ['success', '0'], ['user_id', '42']]);
      expect(store.apiKeys).toHaveLength(1);
      expect(app.callbacks).toHaveLength(0);
    } finally {
      await page.close();
    }
  });

  test('when the callback answers 500, then the key is deleted and WooCommerce\'s error page says the data could not be sent', async () => {
    // Arrange
    app.answerCallback(500);
    const page = await signInInBrowser();
    try {
      // Act
      const [answer] = await Promise.all([page.waitForResponse((r) => r.url().includes('/access_granted/')), page.getByRole('link', { name: 'Approve' }).click()]);
      await page.waitForLoadState();
      await screenshot(page, 'woocommerce-auth-callback-failed');
      // Assert
      expect(answer.status()).toBe(401);
      expect(await page.title()).toBe('Access denied');
      expect((await page.locator('.wp-die-message').textContent())?.trim()).toBe(
        'Error: An error occurred in the request and at the time were unable to send the consumer data.',
      );
      expect(store.callbacks).toMatchObject([{ keyId: 2, status: 500 }]);
      expect(store.apiKeys[1]).toMatchObject({ id: 2, exists: false });
      const sent = JSON.parse(app.callbacks[0].raw);
      const orders = await json(await fetch(oauthSigned(`${store.url}${API}/orders`, { key: sent.consumer_key, secret: sent.consumer_secret })));
      expect(orders).toMatchObject({ status: 401, body: { message: 'Consumer key is invalid.' } });
    } finally {
      await page.close();
    }
  });

  test('when the store takes WooCommerce\'s default and the callback_url is http, then it refuses with WooCommerce\'s message', async () => {
    // Arrange
    await store.stop();
    store = await startWooStore();
    // Act
    const res = await fetch(authorizeUrl());
    const html = await res.text();
    // Assert
    expect(res.status).toBe(401);
    expect(html).toContain('<title>Access denied</title>');
    expect(html).toContain('<div class="wp-die-message">Error: The callback_url needs to be over SSL.</div>');
  });

  test.each([
    ['a scope that is not read, write or read_write', { scope: 'admin' }, 'Error: Invalid scope admin.'],
    ['no user_id', { user_id: '' }, 'Error: Missing parameter user_id.'],
    ['a return_url that is not a URL', { return_url: 'not a url' }, 'Error: The https://not a url is not a valid URL.'],
  ])('when the link has %s, then it is refused before any sign-in', async (_case, params, message) => {
    // Act
    const res = await fetch(authorizeUrl(params), { redirect: 'manual' });
    // Assert
    expect(res.status).toBe(401);
    expect(await res.text()).toContain(`<div class="wp-die-message">${message}</div>`);
  });

  test('when the owner signs in through wp-login.php, then the cookie opens the grant page, and Approve with a forged nonce or without the cookie is refused', async () => {
    // Arrange
    const cookie = await signInCookie();
    const approve = await approveLink(cookie);
    const forgedNonce = approve.replace(/&wc_auth_nonce=[^&]+/, '&wc_auth_nonce=0123456789');
    // Act
    const forged = await fetch(forgedNonce, { headers: { cookie }, redirect: 'manual' });
    const signedOut = await fetch(approve, { redirect: 'manual' });
    // Assert
    expect(cookie).toMatch(/^wordpress_logged_in_[0-9a-f]{32}=admin%7C\d+%7C/);
    expect(forged.status).toBe(401);
    expect(await forged.text()).toContain('Error: Invalid nonce verification.');
    expect(signedOut.status).toBe(401);
    expect(await signedOut.text()).toContain('Error: You do not have permission to access this page.');
    expect(store.apiKeys).toHaveLength(1);
  });

  test('when the callback is https on a certificate the store is given to trust, then it gets the key with no opt-out', async () => {
    // Arrange
    const tls = await selfSignedCertificate();
    const received: string[] = [];
    const server = https.createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push(Buffer.concat(chunks).toString('utf8'));
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      await store.stop();
      store = await startWooStore({ callbackCa: tls.cert });
      const callbackUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
      const cookie = await signInCookie();
      const approve = await approveLink(cookie, authorizeUrl({ callback_url: callbackUrl, scope: 'read' }));
      // Act
      const res = await fetch(approve, { headers: { cookie }, redirect: 'manual' });
      // Assert
      expect(res.status).toBe(302);
      expect([...new URL(res.headers.get('location')!).searchParams]).toEqual([['store', '1'], ['success', '1'], ['user_id', '42']]);
      expect(JSON.parse(received[0])).toMatchObject({ key_id: 2, user_id: '42', key_permissions: 'read' });
      expect(store.callbacks).toMatchObject([{ url: callbackUrl, keyId: 2, status: 200 }]);
      expect(store.apiKeys[1]).toMatchObject({ id: 2, permissions: 'read', exists: true });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test('when the owner revokes a key, then it no longer authenticates, and the list says it is gone', async () => {
    // Act
    store.revokeKey(1);
    const res = await json(await fetch(signedFor(store, '/orders')));
    // Assert
    expect(res).toMatchObject({ status: 401, body: { message: 'Consumer key is invalid.' } });
    expect(store.apiKeys).toEqual([{ id: 1, description: 'Initial key', userId: 1, permissions: 'read_write', truncatedKey: store.consumerKey.slice(-7), exists: false }]);
  });
});
