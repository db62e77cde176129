/**
 * `invoicing payments simulate`, `invoicing webhooks logs` and `invoicing webhooks replay`, run as the
 * real binary (dist/, built by `npm test`'s pretest) against the scratch database of a running app.
 * The app's worker runs no schedule here: the test sweeps when it wants deliveries sent.
 */
import { aDraft, eventsOf, startApp, Tenant, TestApp } from '../support/app';
import { CliResult, requireBuild, runCli } from '../support/cli';
import { freePort } from '../support/net';
import { Api } from '../support/http';
import { startReceiver, TestReceiver } from '../support/receiver';
import { hasScript, plain, Terminal } from '../support/terminal';

let app: TestApp;
let receiver: TestReceiver;

function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(app.databaseUrl, args, { WEBHOOK_ALLOW_PRIVATE: 'true', LOG_LEVEL: 'silent', BASE_URL: app.url, ...env });
}

async function json(args: string[]): Promise<any> {
  const res = await cli([...args, '--json']);
  if (res.code !== 0) throw new Error(`invoicing ${args.join(' ')} exited ${res.code}: ${res.stderr}`);
  return JSON.parse(res.stdout);
}

beforeAll(async () => {
  requireBuild();
  receiver = await startReceiver();
  app = await startApp();
});
afterAll(async () => {
  await app?.stop();
  await receiver?.stop();
});
beforeEach(() => receiver.answer({ status: 200 }));

interface Shop {
  businessId: number;
  keyId: number;
  tenant: Tenant;
}

/**
 * A business and a test key with a webhook URL, made through the services: the commands under test
 * here are `webhooks …`; `business create` and `keys create` are run as commands in cli.test.ts.
 */
async function aShop(webhookUrl = receiver.url): Promise<Shop> {
  const tenant = await app.tenant({ webhookUrl });
  return { businessId: tenant.businessId, keyId: tenant.keyId, tenant };
}

/** A draft of 150.00 USD, issued (sent) through its payment link, so it can be paid. */
async function anIssuedInvoice(api: Api): Promise<number> {
  const draft = await aDraft({ api } as Tenant);
  const res = await api.post(`/invoices/${draft.id}/initiate-payment`);
  if (res.status !== 200) throw new Error(`initiate-payment: ${res.status} ${res.text}`);
  return draft.id;
}

const deliveriesOf = (businessId: number) => app.db.knex('webhook_deliveries').where('business_id', businessId).orderBy('id');

async function markFailed(id: number, createdAt?: string): Promise<void> {
  await app.db
    .knex('webhook_deliveries')
    .where({ id })
    .update({ status: 'failed', attempts: 6, lease_id: null, last_status_code: 503, last_error: 'receiver answered 503', ...(createdAt ? { created_at: createdAt } : {}) });
}

/** Lets the app deliver what the API's own changes queued, so rows stand still while the test edits them. */
const settle = () => app.server.webhooks.sweep();

/** Sweeps, as `invoicing serve` does on its schedule, until the CLI command `running` ends; then its result. */
async function sweepingUntil<T>(running: Promise<T>): Promise<T> {
  let done = false;
  void running.then(
    () => (done = true),
    () => (done = true),
  );
  while (!done) {
    await settle();
    await new Promise((r) => setTimeout(r, 200));
  }
  return running;
}

describe('invoicing payments simulate', () => {
  test('when a test invoice is paid in full, then it prints { payment, invoice }, the invoice is paid and both events are queued for the key', async () => {
    const shop = await aShop();
    const invoiceId = await anIssuedInvoice(shop.tenant.api);
    await settle();

    const res = await cli(['payments', 'simulate', '--invoice', String(invoiceId), '--json']);

    expect(res.code).toBe(0);
    const body = JSON.parse(res.stdout);
    expect(body).toEqual({
      payment: expect.objectContaining({ id: expect.any(Number), invoice_id: invoiceId, amount: 150, currency: 'USD', status: 'succeeded', method: 'simulated', livemode: false }),
      invoice: expect.objectContaining({ id: invoiceId, status: 'paid', amount_paid: 150, amount_due: 0, livemode: false }),
    });
    const row = await app.db.knex('invoices').where('id', invoiceId).first();
    expect(row.status).toBe('paid');
    const events = (await eventsOf(app, shop.businessId)).slice(-2);
    expect(events.map((e) => e.type)).toEqual(['payment.received', 'invoice.paid']);
    expect(events[0].data.payment.id).toBe(body.payment.id);
    const eventIds = (await app.db.knex('events').where('business_id', shop.businessId).whereIn('type', ['payment.received', 'invoice.paid']).pluck('id')).map(Number);
    const deliveries = await app.db.knex('webhook_deliveries').whereIn('event_id', eventIds);
    expect(deliveries).toHaveLength(2);
    expect(deliveries.map((d: any) => [Number(d.api_key_id), d.status])).toEqual([
      [shop.keyId, 'pending'],
      [shop.keyId, 'pending'],
    ]);
  });

  test('when --amount is less than the amount due, then the invoice is partial and no invoice.paid fires', async () => {
    const shop = await aShop();
    const invoiceId = await anIssuedInvoice(shop.tenant.api);

    const res = await cli(['payments', 'simulate', '--invoice', String(invoiceId), '--amount', '50.25']);

    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/50\.25 USD/);
    expect(res.stdout).toMatch(/partial/);
    const types = (await eventsOf(app, shop.businessId)).map((e) => e.type);
    expect(types).toContain('payment.received');
    expect(types).not.toContain('invoice.paid');
  });

  test('when the invoice is live, then it exits 1 with one line and records nothing', async () => {
    const shop = await aShop();
    const live = await json(['keys', 'create', '--business', String(shop.businessId), '--mode', 'live', '--scopes', 'all']);
    const invoiceId = await anIssuedInvoice(app.api(live.key));

    const res = await cli(['payments', 'simulate', '--invoice', String(invoiceId)]);

    expect(res.code).toBe(1);
    expect(res.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^error: payments can be simulated only in test mode/)]);
    expect((await app.db.knex('invoices').where('id', invoiceId).first()).status).toBe('sent');
    expect(await app.db.knex('payments').where('invoice_id', invoiceId)).toHaveLength(0);
  });

  test('when the invoice does not exist, then it exits 1', async () => {
    const res = await cli(['payments', 'simulate', '--invoice', '999999']);

    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/Invoice 999999 not found/);
  });

  test.each([
    ['no --invoice', []],
    ['a bad amount', ['--invoice', '1', '--amount', '12,50']],
    ['a non-numeric id', ['--invoice', 'abc']],
  ])('when payments simulate gets %s, then it exits 2', async (_case, args) => {
    const res = await cli(['payments', 'simulate', ...args]);

    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^error: /);
  });

  test.each([
    ['a comma for the decimal point', '12,50', 'error: --amount must be a positive decimal amount with a dot, e.g. 12.50, not "12,50"'],
    ['more decimals than the currency has', '12.505', 'error: invalid option\n  --amount "12.505": USD amounts have at most 2 decimals'],
    ['more than the amount due', '5000', 'error: invalid option\n  --amount "5000": must not exceed the amount due (150.00 USD)'],
  ])('when the amount has %s, then it exits 2 naming what was typed, and records nothing', async (_case, amount, message) => {
    const shop = await aShop();
    const invoiceId = await anIssuedInvoice(shop.tenant.api);

    const res = await cli(['payments', 'simulate', '--invoice', String(invoiceId), '--amount', amount]);

    expect(res.code).toBe(2);
    expect(res.stderr).toBe(`${message}\n`);
    expect(await app.db.knex('payments').where('invoice_id', invoiceId)).toHaveLength(0);
  });
});

describe('invoicing webhooks logs', () => {
  test('when deliveries exist, then --json lists them newest first, and --status, --key, --event and --since filter', async () => {
    const shop = await aShop();
    const other = await json(['keys', 'create', '--business', String(shop.businessId), '--mode', 'test', '--scopes', 'all', '--webhook-url', receiver.url]);
    const invoiceId = await anIssuedInvoice(shop.tenant.api);
    await cli(['payments', 'simulate', '--invoice', String(invoiceId)]);
    await settle();
    const rows = await deliveriesOf(shop.businessId);
    const failedId = Number(rows[0].id);
    await markFailed(failedId, '2000-01-01 00:00:00.000');

    const [all, failed, ofOther, paid, recent, limited] = await Promise.all([
      json(['webhooks', 'logs', '--business', String(shop.businessId)]),
      json(['webhooks', 'logs', '--business', String(shop.businessId), '--status', 'failed']),
      json(['webhooks', 'logs', '--key', String(other.id)]),
      json(['webhooks', 'logs', '--business', String(shop.businessId), '--event', 'invoice.paid']),
      json(['webhooks', 'logs', '--business', String(shop.businessId), '--since', '2020-01-01']),
      json(['webhooks', 'logs', '--business', String(shop.businessId), '--limit', '2']),
    ]);

    // invoice.created, payment.received, invoice.paid: one delivery each to both keys.
    expect(all).toHaveLength(6);
    expect(all.map((d: any) => d.id)).toEqual(rows.map((r: any) => Number(r.id)).reverse());
    expect(all[0]).toEqual({
      id: expect.any(Number),
      event_id: expect.any(Number),
      event_type: 'invoice.paid',
      idempotency_key: expect.any(String),
      api_key_id: expect.any(Number),
      app_id: null,
      url: receiver.url,
      status: 'succeeded',
      attempts: 1,
      next_attempt_at: null,
      last_status_code: 200,
      last_error: null,
      delivered_at: expect.any(String),
      livemode: false,
      created_at: expect.any(String),
    });
    expect(failed).toEqual([expect.objectContaining({ id: failedId, status: 'failed', last_status_code: 503, last_error: 'receiver answered 503' })]);
    expect(ofOther).toHaveLength(3);
    expect(ofOther.every((d: any) => d.api_key_id === other.id)).toBe(true);
    expect(paid).toHaveLength(2);
    expect(paid.every((d: any) => d.event_type === 'invoice.paid')).toBe(true);
    expect(recent).toHaveLength(5);
    expect(recent.map((d: any) => d.id)).not.toContain(failedId);
    expect(limited.map((d: any) => d.id)).toEqual(all.slice(0, 2).map((d: any) => d.id));
  });

  test('without --json, then it prints a table with a header row', async () => {
    const shop = await aShop();
    await anIssuedInvoice(shop.tenant.api);
    await settle();

    const res = await cli(['webhooks', 'logs', '--business', String(shop.businessId)]);
    const lines = res.stdout.trim().split('\n');

    expect(res.code).toBe(0);
    expect(lines[0]).toMatch(/^ID\s+CREATED\s+EVENT\s+KEY\s+URL\s+STATUS\s+ATTEMPTS\s+LAST$/);
    expect(lines[1]).toMatch(/invoice\.created/);
    expect(lines[1]).toMatch(/succeeded\s+1\s+200$/);
  });

  test.each([
    ['an unknown status', ['--status', 'lost']],
    ['an unknown event', ['--event', 'invoice.eaten']],
    ['a bad --since', ['--since', 'yesterday']],
    ['a bad --limit', ['--limit', '0']],
  ])('when logs gets %s, then it exits 2', async (_case, args) => {
    const res = await cli(['webhooks', 'logs', ...args]);

    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^error: /);
  });
});

describe('invoicing webhooks replay', () => {
  test('when a failed delivery is replayed by id, then it is pending again with a fresh schedule', async () => {
    const shop = await aShop();
    await anIssuedInvoice(shop.tenant.api);
    await settle();
    const [row] = await deliveriesOf(shop.businessId);
    await markFailed(Number(row.id));

    const res = await cli(['webhooks', 'replay', String(row.id), '--json']);

    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({ queued: 1, ids: [Number(row.id)] });
    const after = await app.db.knex('webhook_deliveries').where('id', row.id).first();
    expect(after).toMatchObject({ status: 'pending', lease_id: null });
    expect(Number(after.attempts)).toBe(0);
    const logged = await json(['webhooks', 'logs', '--business', String(shop.businessId)]);
    expect(logged[0]).toMatchObject({ id: Number(row.id), status: 'pending', attempts: 0 });
  });

  test('when --failed is given, then every failed delivery matching the filters is queued, and --since narrows them', async () => {
    const shop = await aShop();
    const invoiceId = await anIssuedInvoice(shop.tenant.api);
    await cli(['payments', 'simulate', '--invoice', String(invoiceId)]);
    await settle();
    const [created, received] = await deliveriesOf(shop.businessId);
    await markFailed(Number(created.id), '2000-01-01 00:00:00.000');
    await markFailed(Number(received.id));

    const recent = await cli(['webhooks', 'replay', '--failed', '--business', String(shop.businessId), '--since', '2020-01-01T00:00:00Z']);
    const rest = await json(['webhooks', 'replay', '--failed', '--business', String(shop.businessId)]);
    const none = await json(['webhooks', 'replay', '--failed', '--business', String(shop.businessId)]);

    expect(recent.code).toBe(0);
    expect(recent.stdout).toMatch(/^Queued 1 failed delivery/);
    expect(rest).toEqual({ queued: 1, ids: [Number(created.id)], still_retrying: 0 });
    expect(none).toEqual({ queued: 0, ids: [], still_retrying: 0 });
    const statuses = (await deliveriesOf(shop.businessId)).map((d: any) => d.status);
    expect(statuses).not.toContain('failed');
  });

  test('when deliveries are still retrying, then --failed leaves them and says so, and --include-retrying sends them now', async () => {
    const shop = await aShop();
    await anIssuedInvoice(shop.tenant.api);
    await settle();
    const [row] = await deliveriesOf(shop.businessId);
    const later = new Date(Date.now() + 3_600_000).toISOString().replace('T', ' ').replace('Z', '');
    await app.db.knex('webhook_deliveries').where({ id: row.id }).update({ status: 'pending', attempts: 2, lease_id: null, next_attempt_at: later, last_status_code: 503 });

    const failedOnly = await cli(['webhooks', 'replay', '--failed', '--business', String(shop.businessId)]);
    const withRetrying = await json(['webhooks', 'replay', '--failed', '--include-retrying', '--business', String(shop.businessId)]);

    expect(failedOnly.code).toBe(0);
    expect(failedOnly.stdout).toContain('No failed deliveries to replay');
    expect(failedOnly.stdout).toMatch(/1 delivery is still retrying on their schedule .* --include-retrying/);
    expect(withRetrying).toEqual({ queued: 1, ids: [Number(row.id)], still_retrying: 0 });
    const after = await app.db.knex('webhook_deliveries').where('id', row.id).first();
    expect(Number(after.attempts)).toBe(0);
  });

  test('when --wait is given, then it waits for the server to send them and prints what happened', async () => {
    const shop = await aShop();
    await anIssuedInvoice(shop.tenant.api);
    await settle();
    const [row] = await deliveriesOf(shop.businessId);
    await markFailed(Number(row.id));
    const before = receiver.received.length;

    const res = await sweepingUntil(cli(['webhooks', 'replay', '--failed', '--business', String(shop.businessId), '--wait', '--timeout', '20', '--json']));

    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({
      queued: 1,
      ids: [Number(row.id)],
      still_retrying: 0,
      result: { succeeded: 1, failed: 0, retrying: 0, pending: 0, timed_out: false },
    });
    expect(receiver.received.length).toBe(before + 1);
    expect((await app.db.knex('webhook_deliveries').where('id', row.id).first()).status).toBe('succeeded');
  });

  (hasScript ? test : test.skip)('when a replay is waited for on a terminal, then a progress bar shows until every delivery is attempted', async () => {
    const shop = await aShop();
    await anIssuedInvoice(shop.tenant.api);
    await anIssuedInvoice(shop.tenant.api);
    await settle();
    const rows = await deliveriesOf(shop.businessId);
    for (const row of rows) await markFailed(Number(row.id));

    const terminal = new Terminal(app.databaseUrl, ['webhooks', 'replay', '--failed', '--business', String(shop.businessId), '--wait', '--timeout', '20'], {
      WEBHOOK_ALLOW_PRIVATE: 'true',
      LOG_LEVEL: 'silent',
      BASE_URL: app.url,
    });
    const code = await sweepingUntil(terminal.exitCode());

    expect(code).toBe(0);
    expect(plain(terminal.screen)).toMatch(new RegExp(`\\[[#-]{24}\\] \\d+/${rows.length} attempted`));
    expect(plain(terminal.screen)).toContain(`Delivered: ${rows.length}, failed: 0`);
  });

  test('when --wait is given and the receiver still fails, then the summary says it will be retried', async () => {
    const shop = await aShop();
    await anIssuedInvoice(shop.tenant.api);
    await settle();
    const [row] = await deliveriesOf(shop.businessId);
    await markFailed(Number(row.id));
    receiver.answer({ status: 500 });

    const res = await sweepingUntil(cli(['webhooks', 'replay', String(row.id), '--wait', '--timeout', '20']));

    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/Delivered: 0, failed: 1 \(1 will be retried/);
  });

  test('when nothing is running to deliver, then --wait gives up after --timeout', async () => {
    const shop = await aShop();
    await anIssuedInvoice(shop.tenant.api);
    await settle();
    const [row] = await deliveriesOf(shop.businessId);
    await markFailed(Number(row.id));

    const res = await cli(['webhooks', 'replay', String(row.id), '--wait', '--timeout', '1', '--json']);

    expect(res.code).toBe(1);
    expect(JSON.parse(res.stdout).result).toEqual({ succeeded: 0, failed: 0, retrying: 0, pending: 1, timed_out: true });
    expect(res.stderr).toBe('error: the wait ended after 1 s with 1 not attempted\n');
  });

  test('when the server does not answer, then --wait says so, exits 1 and queues nothing', async () => {
    const shop = await aShop();
    await anIssuedInvoice(shop.tenant.api);
    await settle();
    const [row] = await deliveriesOf(shop.businessId);
    await markFailed(Number(row.id));
    const closed = `http://127.0.0.1:${await freePort()}`;

    const res = await cli(['webhooks', 'replay', String(row.id), '--wait'], { BASE_URL: closed });

    expect(res.code).toBe(1);
    expect(res.stderr).toBe(`error: the server at ${closed}/api/v1/partner does not answer: start it with \`npm start\` (or \`invoicing serve\`), or point --api-url at it; nothing was queued\n`);
    expect((await app.db.knex('webhook_deliveries').where('id', row.id).first()).status).toBe('failed');
  });

  test('when the delivery does not exist, then it exits 1', async () => {
    const res = await cli(['webhooks', 'replay', '999999']);

    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/Webhook delivery 999999 not found/);
  });

  test.each([
    ['neither an id nor --failed', []],
    ['both an id and --failed', ['5', '--failed']],
    ['--since with an id', ['5', '--since', '2026-01-01']],
    ['a non-numeric id', ['abc']],
    ['--include-retrying without --failed', ['5', '--include-retrying']],
  ])('when replay gets %s, then it exits 2 with one line', async (_case, args) => {
    const res = await cli(['webhooks', 'replay', ...args]);

    expect(res.code).toBe(2);
    expect(res.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^error: /)]);
  });
});
