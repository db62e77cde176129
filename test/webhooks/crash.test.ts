/**
 * Delivery across process death and between processes, with real `invoicing serve` children:
 * nothing committed may be lost (duplicates are allowed: receivers deduplicate on idempotency_key).
 */
import { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../server/config';
import { Database } from '../../server/db/database';
import { systemActor } from '../../server/auth/actor';
import { createServices } from '../../server/services';
import { scratchDatabase, ScratchDatabase, testDriver } from '../support/database';
import { startReceiver, TestReceiver } from '../support/receiver';
import { serveProcess, stopped } from '../support/serve';

const APP_SECRET_KEY = randomBytes(32).toString('base64');
const LEASE_SECONDS = 15;

function serverEnv(databaseUrl: string): NodeJS.ProcessEnv {
  return {
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'silent',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_SWEEP_SECONDS: '1',
    WEBHOOK_LEASE_SECONDS: String(LEASE_SECONDS),
    APP_SECRET_KEY,
  };
}

/** Starts `invoicing serve` on the database and resolves once it listens. */
async function serve(databaseUrl: string): Promise<ChildProcess> {
  return (await serveProcess(serverEnv(databaseUrl))).child;
}

/** Commits `count` events for a business whose test key delivers to `url`; returns their idempotency keys. */
async function commitEvents(databaseUrl: string, url: string, count: number): Promise<string[]> {
  const db = Database.open(databaseUrl);
  try {
    await db.migrate();
    const services = createServices(db, loadConfig({ ...serverEnv(databaseUrl) }));
    const business = await services.businesses.create({ name: 'Crash Co', currency: 'USD' });
    await services.keys.create({ businessId: business.id, mode: 'test', scopes: ['invoices:read'], webhookUrl: url });
    const keys: string[] = [];
    for (let start = 0; start < count; start += 100) {
      await db.transaction(async (trx) => {
        for (let i = start; i < Math.min(start + 100, count); i += 1) {
          const event = await services.outbox.record(trx, systemActor('cli', { businessId: business.id, livemode: false }), 'invoice.created', { invoice: { id: i } });
          keys.push(event.idempotency_key);
        }
      });
    }
    return keys;
  } finally {
    await db.close();
  }
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const receivedKeys = (receiver: TestReceiver) => new Set(receiver.received.map((w) => w.body.idempotency_key as string));

describe('webhook delivery across processes', () => {
  let receiver: TestReceiver;
  let scratch: ScratchDatabase;
  const children: ChildProcess[] = [];

  beforeEach(async () => {
    receiver = await startReceiver();
    scratch = await scratchDatabase({ migrated: true });
  });
  afterEach(async () => {
    for (const child of children.splice(0)) {
      child.kill('SIGKILL');
      await stopped(child);
    }
    await receiver.stop();
    await scratch.drop();
  });

  test('when the server is killed with SIGKILL mid-delivery, then after a restart every event reaches the receiver', async () => {
    receiver.answer({ status: 200, delayMs: 20 });
    const keys = await commitEvents(scratch.url, receiver.url, 500);
    const first = await serve(scratch.url);
    children.push(first);
    await until(() => receiver.received.length >= 50, 30_000, 'the first deliveries');

    first.kill('SIGKILL');
    await stopped(first);
    const deliveredBeforeCrash = receivedKeys(receiver).size;
    children.push(await serve(scratch.url));
    await until(() => receivedKeys(receiver).size === keys.length, LEASE_SECONDS * 1000 + 45_000, 'every event after the restart');

    expect(deliveredBeforeCrash).toBeLessThan(keys.length);
    expect([...receivedKeys(receiver)].sort()).toEqual([...keys].sort());
  }, 90_000);

  (testDriver() === 'mysql' ? test : test.skip)(
    'when two processes deliver 2 000 events from one database, then none is lost and duplicates come only from expired leases',
    async () => {
      const keys = await commitEvents(scratch.url, receiver.url, 2000);

      children.push(...(await Promise.all([serve(scratch.url), serve(scratch.url)])));
      await until(() => receivedKeys(receiver).size === keys.length, 60_000, 'every event');

      const db = Database.open(scratch.url);
      try {
        await until(async () => Number((await db.knex('webhook_deliveries').whereNot('status', 'succeeded').count({ n: '*' }))[0].n) === 0, 10_000, 'the results');
        const [{ retries }] = await db.knex('webhook_deliveries').sum({ retries: db.knex.raw('attempts - 1') });
        const duplicates = receiver.received.length - keys.length;
        // A second receipt of an event needs a second attempt, which only an expired lease (or a failed attempt) makes.
        expect(duplicates).toBeLessThanOrEqual(Number(retries));
        expect([...receivedKeys(receiver)].sort()).toEqual([...keys].sort());
      } finally {
        await db.close();
      }
    },
    120_000,
  );
});
