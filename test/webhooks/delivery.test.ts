import { createHmac, timingSafeEqual } from 'node:crypto';
import pino from 'pino';
import { sendWebhook } from '../../server/webhooks/sender';
import { eventually } from '../support/eventually';
import { SecretBox } from '../../server/keys/secret-box';
import { aClient, aDraft, anInvoice, startApp, Tenant, TEST_APP_SECRET_KEY, TestApp } from '../support/app';
import { ReceivedWebhook, startReceiver, TestClock, TestReceiver } from '../support/receiver';

const SECRET = 'whsec_test_0123456789abcdef';

/** Written from the specification's words, not with the project's helper: hex HMAC-SHA256 of the raw body. */
function verifies(webhook: ReceivedWebhook, secret: string, raw: Buffer = webhook.raw): boolean {
  const expected = createHmac('sha256', secret).update(raw).digest('hex');
  const given = String(webhook.headers['x-service-signature'] ?? '');
  return given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}

describe('webhook delivery', () => {
  let app: TestApp;
  let receiver: TestReceiver;
  const clock = new TestClock();

  beforeAll(async () => {
    receiver = await startReceiver();
    app = await startApp({}, { clock, webhookTimeoutMs: 300 });
  });
  afterAll(async () => {
    await app?.stop();
    await receiver?.stop();
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.answer({ status: 200 });
  });

  async function receivingTenant(overrides: Parameters<TestApp['tenant']>[0] = {}): Promise<Tenant> {
    return app.tenant({ webhookUrl: receiver.url, webhookSecret: SECRET, ...overrides });
  }

  const sweep = () => app.server.webhooks.sweep();

  test('when invoice and payment events happen, then each arrives signed with the contract payload', async () => {
    const t = await receivingTenant();
    const draft = await aDraft(t);
    await t.api.post(`/invoices/${draft.id}/send`);
    const link = new URL((await t.api.post(`/invoices/${draft.id}/initiate-payment`)).body.payment_url);
    await fetch(`${app.url}${link.pathname}`);
    await t.api.post(`/invoices/${draft.id}/simulate-payment`);

    await sweep();

    const types = receiver.received.map((w) => w.body.type).sort();
    expect(types).toEqual(['invoice.created', 'invoice.paid', 'invoice.sent', 'invoice.viewed', 'payment.received']);
    for (const webhook of receiver.received) {
      expect(verifies(webhook, SECRET)).toBe(true);
      expect(webhook.headers['content-type']).toBe('application/json');
      expect(webhook.headers['x-service-event']).toBe(webhook.body.type);
      expect(webhook.headers['x-service-delivery']).toEqual(expect.any(String));
      expect(webhook.body).toEqual({
        id: expect.any(Number),
        type: webhook.body.type,
        created_at: expect.any(String),
        livemode: false,
        business_id: t.businessId,
        idempotency_key: expect.stringMatching(/^[0-9a-f-]{36}$/),
        data: expect.objectContaining({ invoice: expect.objectContaining({ id: draft.id }) }),
      });
    }
    const paid = receiver.received.find((w) => w.body.type === 'payment.received')!;
    expect(paid.body.data.payment).toMatchObject({ invoice_id: draft.id, status: 'succeeded' });
  });

  test('when a change commits, then its first attempt goes at once, without waiting for a sweep', async () => {
    const t = await receivingTenant();

    await aDraft(t);

    const deadline = Date.now() + 3000;
    while (receiver.received.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(receiver.received.map((w) => w.body.type)).toEqual(['invoice.created']);
  });

  test('when a byte of the body changes or another secret is used, then verification fails', async () => {
    const t = await receivingTenant();
    await aDraft(t);
    await sweep();
    const [webhook] = receiver.received;

    const flipped = Buffer.from(webhook.raw);
    flipped[10] ^= 1;

    expect(verifies(webhook, SECRET)).toBe(true);
    expect(verifies(webhook, SECRET, flipped)).toBe(false);
    expect(verifies(webhook, 'whsec_another_secret_value')).toBe(false);
  });

  test('when the timestamped signature is checked, then it covers the time and the body', async () => {
    const t = await receivingTenant();
    await aDraft(t);
    await sweep();
    const [webhook] = receiver.received;

    const [, time, mac] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(webhook.headers['x-service-signature-v2']))!;
    const expected = createHmac('sha256', SECRET).update(`${time}.`).update(webhook.raw).digest('hex');

    expect(mac).toBe(expected);
    expect(Math.abs(Number(time) - clock.now().getTime() / 1000)).toBeLessThan(5);
  });

  test.each([
    ['answers 500', { status: 500 }],
    ['redirects', { status: 302, location: 'http://127.0.0.1:9/elsewhere' }],
    ['times out', { hang: true as const }],
  ])('when the receiver %s, then it gets exactly the scheduled retries and the delivery fails', async (_case, behaviour) => {
    const t = await receivingTenant();
    receiver.answer(behaviour);
    // This business's deliveries only: on a loaded machine an earlier test's delivery can miss the
    // 300 ms timeout, and its retry reaches the same receiver when the clock moves on.
    const mine = () => receiver.received.filter((webhook) => webhook.body.business_id === t.businessId);
    await aDraft(t);
    await sweep();
    expect(mine()).toHaveLength(1);

    for (const delay of [10, 30, 90, 270, 810]) {
      clock.advance(delay * 1000 * 0.85); // before the earliest jittered moment: nothing is due
      await sweep();
      const before = mine().length;
      clock.advance(delay * 1000 * 0.3); // past the latest jittered moment
      await sweep();
      expect(mine().length).toBe(before + 1);
    }
    clock.advance(3600 * 1000);
    await sweep();

    expect(mine()).toHaveLength(6);
    const log = await t.api.get('/webhook-deliveries');
    expect(log.body.data).toEqual([expect.objectContaining({ status: 'failed', attempts: 6, event_type: 'invoice.created' })]);
    const detail = await t.api.get(`/webhook-deliveries/${log.body.data[0].id}`);
    expect(detail.body.attempts).toHaveLength(6);
    expect(new Set(mine().map((w) => w.body.idempotency_key)).size).toBe(1);
  });

  test('when a failed delivery is replayed after the receiver recovers, then it arrives with the same idempotency_key', async () => {
    const t = await receivingTenant();
    receiver.answer({ status: 503 });
    await aDraft(t);
    await sweep();
    for (let i = 0; i < 5; i += 1) {
      clock.advance(1000 * 1000);
      await sweep();
    }
    const failed = (await t.api.get('/webhook-deliveries?status=failed')).body.data[0];
    const firstKey = receiver.received[0].body.idempotency_key;
    receiver.answer({ status: 204 });

    const replay = await t.api.post(`/webhook-deliveries/${failed.id}/replay`);
    await sweep();

    expect(replay.status).toBe(200);
    const last = receiver.received[receiver.received.length - 1];
    expect(last.body.idempotency_key).toBe(firstKey);
    expect((await t.api.get(`/webhook-deliveries/${failed.id}`)).body.delivery).toMatchObject({ status: 'succeeded' });
  });

  test('when a delivery is replayed inside an idempotent request, then the worker is told only after that request commits', async () => {
    const t = await receivingTenant();
    receiver.answer({ status: 503 });
    await aDraft(t);
    await sweep();
    const delivery = (await t.api.get('/webhook-deliveries')).body.data[0];
    const told: { insideTransaction: boolean; pending: boolean }[] = [];
    app.server.services.outbox.onDeliveriesDue(() => {
      // Read on the pool, as the worker's claim would: inside the request's transaction it would see its own writes only.
      told.push({ insideTransaction: app.db.current !== app.db.knex, pending: false });
      void app.db.knex('webhook_deliveries').where('id', delivery.id).first().then((row: { status: string; attempts: number }) => {
        told[told.length - 1].pending = row.status === 'pending' && row.attempts === 0;
      });
    });

    await t.api.post(`/webhook-deliveries/${delivery.id}/replay`, undefined, { headers: { 'Idempotency-Key': `replay-${delivery.id}` } });
    await new Promise((resolve) => setTimeout(resolve, 100));

    expect(told[0]).toEqual({ insideTransaction: false, pending: true });
  });

  test('when a delivery is replayed after it succeeded, then it arrives with a new x-service-delivery', async () => {
    const t = await receivingTenant();
    await aDraft(t);
    await sweep();
    const delivery = (await t.api.get('/webhook-deliveries')).body.data[0];

    await t.api.post(`/webhook-deliveries/${delivery.id}/replay`);
    await sweep();
    await t.api.post(`/webhook-deliveries/${delivery.id}/replay`);
    await sweep();

    const ids = receiver.received.map((w) => w.headers['x-service-delivery']);
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).toMatch(new RegExp(`^${delivery.id}-[0-9]+$`));
    const attempts = (await t.api.get(`/webhook-deliveries/${delivery.id}`)).body.attempts;
    expect(attempts.map((a: { attempt: number }) => `${delivery.id}-${a.attempt}`)).toEqual(ids);
  });

  test('when the key\'s webhook URL is removed, then its pending deliveries stop and no retry reaches the old receiver', async () => {
    const t = await receivingTenant();
    receiver.answer({ status: 500 });
    await aDraft(t);
    await sweep();
    receiver.answer({ status: 200 });

    await app.server.services.keys.update(t.keyId, { webhookUrl: null });
    for (let i = 0; i < 6; i += 1) {
      clock.advance(1000 * 1000);
      await sweep();
    }

    expect(receiver.received.filter((w) => w.body.business_id === t.businessId)).toHaveLength(1);
    const [delivery] = (await t.api.get('/webhook-deliveries')).body.data;
    expect(delivery).toMatchObject({ status: 'failed', last_error: expect.stringMatching(/webhook URL was removed/) });
  });

  test('when the URL is removed while an attempt is under way, then that attempt finishes and is recorded', async () => {
    const t = await receivingTenant();
    receiver.answer({ status: 200, delayMs: 150 }); // within the app's 300 ms timeout
    await aDraft(t);
    while (receiver.received.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));

    await app.server.services.keys.update(t.keyId, { webhookUrl: null });
    await sweep();

    const [delivery] = (await t.api.get('/webhook-deliveries')).body.data;
    expect(delivery).toMatchObject({ status: 'succeeded', attempts: 1 });
  });

  test('when a delivery stopped by the removal is replayed, then it is refused until the key has a URL again, and then goes there', async () => {
    const t = await receivingTenant();
    receiver.answer({ status: 500 });
    await aDraft(t);
    await sweep();
    await app.server.services.keys.update(t.keyId, { webhookUrl: null });
    const [stopped] = (await t.api.get('/webhook-deliveries')).body.data;
    const next = await startReceiver();
    try {
      const refused = await t.api.post(`/webhook-deliveries/${stopped.id}/replay`);
      await app.server.services.keys.update(t.keyId, { webhookUrl: next.url });
      const replayed = await t.api.post(`/webhook-deliveries/${stopped.id}/replay`);
      await sweep();

      expect(refused.status).toBe(422);
      expect(refused.body.error).toBe('invalid_state');
      expect(replayed.body.delivery).toMatchObject({ url: next.url });
      expect(next.received.map((w) => w.body.business_id)).toEqual([t.businessId]);
      expect(receiver.received.filter((w) => w.body.business_id === t.businessId)).toHaveLength(1);
    } finally {
      await next.stop();
    }
  });

  test('when business A has events, then business B and the live keys of A receive none of them', async () => {
    const other = await startReceiver();
    try {
      const a = await receivingTenant();
      await app.tenant({ webhookUrl: other.url, webhookSecret: SECRET });
      await app.tenant({ businessId: a.businessId, mode: 'live', webhookUrl: other.url, webhookSecret: SECRET });

      await aDraft(a);
      await sweep();

      expect(receiver.received.map((w) => w.body.business_id)).toEqual([a.businessId]);
      expect(other.received).toEqual([]);
    } finally {
      await other.stop();
    }
  });

  test('when a key has no webhook URL, then its business events are delivered only to keys that have one', async () => {
    const t = await receivingTenant();
    const silent = await app.tenant({ businessId: t.businessId });
    const client = (await silent.api.post('/clients', aClient())).body.client;

    await silent.api.post('/invoices', anInvoice(client.id));
    await sweep();

    expect(receiver.received).toHaveLength(1);
    expect((await silent.api.get('/webhook-deliveries')).body.data).toEqual([]);
    expect((await t.api.get('/webhook-deliveries')).body.meta.total).toBe(1);
  });
});

describe('the address check at connect time', () => {
  test('when a host name resolves to a loopback address, then the attempt is refused without the flag', async () => {
    const receiver = await startReceiver();
    try {
      const url = receiver.url.replace('127.0.0.1', 'localhost');

      const refused = await sendWebhook(url, Buffer.from('{}'), {}, { allowPrivate: false });
      const allowed = await sendWebhook(url, Buffer.from('{}'), {}, { allowPrivate: true });

      expect(refused).toMatchObject({ statusCode: null, error: expect.stringContaining('private address'), refusedAddress: true });
      expect(allowed.statusCode).toBe(200);
      expect(receiver.received).toHaveLength(1);
    } finally {
      await receiver.stop();
    }
  });

  test('when the URL is a private IP literal, then the attempt is refused without the flag', async () => {
    const refused = await sendWebhook('http://10.1.2.3/hook', Buffer.from('{}'), {}, { allowPrivate: false });

    expect(refused.error).toContain('private address');
    expect(refused.refusedAddress).toBe(true);
  });
});

describe('deliveries refused by the address check', () => {
  test('when a key\'s URL is private and the server does not allow it, then the refusal is logged once for the key, with the reason', async () => {
    // Arrange: a key given a local URL by a CLI run with WEBHOOK_ALLOW_PRIVATE=true, a server without it
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const strict = await startApp({ webhookAllowPrivate: false }, { logger });
    try {
      const t = await strict.tenant();
      const sealed = new SecretBox(Buffer.from(TEST_APP_SECRET_KEY, 'base64')).seal(SECRET, { table: 'api_keys', column: 'webhook_secret', id: t.keyId, businessId: t.businessId });
      await strict.db.knex('api_keys').where({ id: t.keyId }).update({ webhook_url: 'http://127.0.0.1:9/hooks', webhook_secret: sealed });

      // Act
      await aDraft(t);
      await aDraft(t);
      await strict.server.webhooks.sweep();

      // Assert
      const refusals = () => lines.map((line) => JSON.parse(line) as { msg: string; receiver?: string; reason?: string }).filter((l) => l.msg.includes('refused by the address check'));
      await eventually(async () => (await strict.db.knex('webhook_deliveries').whereNotNull('last_error')).length === 2);
      expect(refusals()).toEqual([expect.objectContaining({ receiver: `key ${t.keyId}`, reason: expect.stringContaining('private address') })]);
      expect(lines.join('\n')).toContain('WEBHOOK_ALLOW_PRIVATE');
    } finally {
      await strict.stop();
    }
  });
});
