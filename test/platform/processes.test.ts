/**
 * Three `invoicing serve` processes on one MariaDB and one Redis behave as one server: requests
 * spread over them share one rate-limit counter, one Idempotency-Key makes one record, every event
 * is delivered, a process killed with SIGKILL under load loses no acknowledged write and no
 * committed event, and their sweeps issue each recurring invoice's date once.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { loadConfig } from '../../server/config';
import { Database } from '../../server/db/database';
import { ALL_SCOPES } from '../../server/auth/scopes';
import { createServices } from '../../server/services';
import { scratchDatabase, ScratchDatabase, testDriver } from '../support/database';
import { eventually } from '../support/eventually';
import { startReceiver, TestReceiver } from '../support/receiver';
import { serveProcess, ServedProcess, stopped } from '../support/serve';

const redisUrl = process.env.TEST_REDIS_URL;
const APP_SECRET_KEY = randomBytes(32).toString('base64');
const RATE_LIMIT = 150;
const LEASE_SECONDS = 15;

const onMysqlAndRedis = testDriver() === 'mysql' && redisUrl ? describe : describe.skip;

onMysqlAndRedis('three server processes on one database and one Redis', () => {
  let scratch: ScratchDatabase;
  let receiver: TestReceiver;
  let db: Database;
  let processes: ServedProcess[];

  beforeAll(async () => {
    scratch = await scratchDatabase({ migrated: true });
    receiver = await startReceiver();
    db = Database.open(scratch.url);
    await db.migrate();
    const env = {
      DATABASE_URL: scratch.url,
      REDIS_URL: redisUrl,
      REDIS_PREFIX: `processes-test-${randomUUID()}:`,
      RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
      APP_SECRET_KEY,
      LOG_LEVEL: 'silent',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_SWEEP_SECONDS: '1',
      WEBHOOK_LEASE_SECONDS: String(LEASE_SECONDS),
      RECURRING_SWEEP_SECONDS: '1',
    };
    processes = await Promise.all([serveProcess(env), serveProcess(env), serveProcess(env)]);
  });
  afterAll(async () => {
    for (const { child } of processes ?? []) {
      child.kill('SIGKILL');
      await stopped(child);
    }
    await db?.close();
    await receiver?.stop();
    await scratch?.drop();
  });

  const servicesOfTest = () => createServices(db, loadConfig({ DATABASE_URL: scratch.url, APP_SECRET_KEY, WEBHOOK_ALLOW_PRIVATE: 'true' }));

  /** A business with its own test key (its own rate-limit counter), delivering to the receiver. */
  async function aKey(): Promise<{ key: string; businessId: number }> {
    const services = servicesOfTest();
    const business = await services.businesses.create({ name: 'Spread Co', currency: 'USD' });
    const { key } = await services.keys.create({ businessId: business.id, mode: 'test', scopes: [...ALL_SCOPES], webhookUrl: receiver.url });
    return { key, businessId: business.id };
  }

  /** The `i`th request goes to process i mod 3, as a round-robin load balancer sends it. */
  function call(i: number, key: string, path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) {
    return fetch(`${processes[i % processes.length].api}${path}`, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...init.headers },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  }

  test('when requests are spread over the three, the rate limit counts them as one', async () => {
    const { key } = await aKey();

    // Sent 20 at a time, so that all of them fall in one minute's window even on a loaded machine
    // (one at a time, they took over a minute there, and the second window let 9 more through).
    const statuses: number[] = [];
    for (let first = 0; first < RATE_LIMIT + 9; first += 20) {
      const batch = Array.from({ length: Math.min(20, RATE_LIMIT + 9 - first) }, (_, j) => call(first + j, key, '/clients'));
      statuses.push(...(await Promise.all(batch)).map((res) => res.status));
    }

    expect(statuses.filter((s) => s === 200)).toHaveLength(RATE_LIMIT);
    expect(statuses.filter((s) => s === 429)).toHaveLength(9);
  });

  test('when one Idempotency-Key is sent to all three at once, one client is created and every answer shows it', async () => {
    const { key } = await aKey();
    const send = (i: number) =>
      call(i, key, '/clients', { method: 'POST', body: { name: 'Once Only', email: 'once@example.com' }, headers: { 'idempotency-key': 'create-once' } });

    const concurrent = await Promise.all([0, 1, 2].map(send));
    const afterwards = await Promise.all([0, 1, 2].map(send));

    // A request that finds the key still in flight is told so (409); none creates a second client.
    expect(concurrent.map((r) => r.status).filter((s) => s !== 201 && s !== 409)).toEqual([]);
    const ids = await Promise.all(afterwards.map(async (r) => ((await r.json()) as { client: { id: number } }).client.id));
    expect(afterwards.map((r) => r.status)).toEqual([201, 201, 201]);
    expect(new Set(ids).size).toBe(1);
    const list = (await (await call(0, key, '/clients')).json()) as { data: unknown[] };
    expect(list.data).toHaveLength(1);
  });

  test('when the three sweep recurring invoices every second while their dates come, then each date of each schedule is issued exactly once', async () => {
    // Arrange: five monthly schedules of a test mode frozen before their first date
    const { key, businessId } = await aKey();
    const clocks = servicesOfTest().clocks;
    await clocks.freezeTestMode(businessId, new Date('2031-01-01T00:00:00.000Z'));
    const schedules: { id: number }[] = [];
    for (const day of ['2031-01-05', '2031-01-28', '2031-01-29', '2031-01-30', '2031-01-31']) {
      const client = (await (await call(schedules.length, key, '/clients', { method: 'POST', body: { name: `Subscriber ${day}`, email: `sub.${day}@example.com` } })).json()) as { client: { id: number } };
      const res = await call(schedules.length, key, '/recurring-invoices', {
        method: 'POST',
        body: { client_id: client.client.id, currency: 'USD', items: [{ description: 'Plan', quantity: 1, unit_price: 25 }], interval: 'month', start_date: day, days_until_due: 7, auto_send: false },
      });
      expect(res.status).toBe(201);
      schedules.push(((await res.json()) as { recurring_invoice: { id: number } }).recurring_invoice);
    }

    // Act: a year's dates come at once, for every process's sweep
    await clocks.freezeTestMode(businessId, new Date('2031-12-31T12:00:00.000Z'));
    const invoices = () => db.knex('invoices').where('business_id', businessId).select('recurring_invoice_id', 'issue_date', 'number');
    await eventually(async () => (await invoices()).length >= 60, 60_000);
    // More sweeps of all three, which must find nothing left.
    await new Promise((resolve) => setTimeout(resolve, 3000));

    // Assert
    const issued = await invoices();
    expect(issued).toHaveLength(60);
    for (const schedule of schedules) expect(issued.filter((i: { recurring_invoice_id: number }) => i.recurring_invoice_id === schedule.id)).toHaveLength(12);
    expect(new Set(issued.map((i: { recurring_invoice_id: number; issue_date: string }) => `${i.recurring_invoice_id} ${i.issue_date}`)).size).toBe(60);
    expect(issued.map((i: { number: string }) => i.number).sort()).toEqual(Array.from({ length: 60 }, (_, n) => `INV-${String(n + 1).padStart(6, '0')}`));
    const created = await db.knex('events').where({ business_id: businessId, type: 'invoice.created' }).count({ n: '*' });
    expect(Number(created[0].n)).toBe(60);
    const dates = issued.filter((i: { recurring_invoice_id: number }) => i.recurring_invoice_id === schedules[4].id).map((i: { issue_date: string }) => i.issue_date).sort();
    expect(dates.slice(0, 4)).toEqual(['2031-01-31', '2031-02-28', '2031-03-31', '2031-04-30']);
  }, 90_000);

  test('when one process is killed with SIGKILL under load, every acknowledged invoice exists and every committed event is delivered', async () => {
    const { key, businessId } = await aKey();
    // A receiver slow enough that the victim dies with deliveries under way.
    receiver.answer({ status: 200, delayMs: 300 });
    const client = (await (await call(0, key, '/clients', { method: 'POST', body: { name: 'Buyer', email: 'buyer@example.com' } })).json()) as { client: { id: number } };
    const acknowledged: number[] = [];
    let sent = 0;
    const victim = processes[1];

    // Six clients create invoices round-robin; the second process dies a third of the way through.
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        while (sent < 90) {
          const i = sent++;
          if (i === 30) victim.child.kill('SIGKILL');
          const res = await call(i, key, '/invoices', {
            method: 'POST',
            body: { client_id: client.client.id, currency: 'USD', items: [{ description: `Order ${i}`, quantity: 1, unit_price: 10 }] },
          }).catch(() => null); // the dead process refuses: unacknowledged, so either outcome is allowed
          if (res?.status === 201) acknowledged.push(((await res.json()) as { invoice: { id: number } }).invoice.id);
        }
      }),
    );
    await stopped(victim.child);

    const found = await db.knex('invoices').whereIn('id', acknowledged).pluck('id');
    expect(found.sort()).toEqual([...acknowledged].sort());
    const committed: string[] = (await db.knex('events').where('business_id', businessId).select('idempotency_key')).map((e: { idempotency_key: string }) => e.idempotency_key);
    expect(committed.length).toBeGreaterThanOrEqual(acknowledged.length);
    const received = () => new Set(receiver.received.map((w) => w.body.idempotency_key as string));
    // The dead process's leased deliveries come due when their lease ends; a survivor's sweep sends them.
    await eventually(() => committed.every((k) => received().has(k)), (LEASE_SECONDS + 15) * 1000);
  }, 90_000);
});
