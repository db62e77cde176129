/**
 * An Idempotency-Key claim belongs to a live request: its owner renews a lease while it runs, and
 * only the owner can settle it. The request is held up the way a busy database holds it up: a
 * table lock taken by another connection (MariaDB; the embedded SQLite database has one connection,
 * so a stalled request there holds up every other request too and no retry can claim anything).
 */
import { randomUUID } from 'node:crypto';
import { Knex } from 'knex';
import { anInvoice, useApp } from '../support/app';
import { testDriver } from '../support/database';
import { eventually } from '../support/eventually';

/**
 * Long enough that a renewal (every quarter lease) delayed by a loaded machine still lands inside
 * the lease: at 400 ms, a 300 ms stall of the event loop or the database let a retry take over.
 */
const LEASE_MS = 2000;
const ctx = useApp({ idempotencyLeaseMs: LEASE_MS });
const onMysql = testDriver() === 'mysql' ? describe : describe.skip;

const withKey = (key: string) => ({ headers: { 'Idempotency-Key': key } });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const invoiceCount = async () => (await ctx.t.api.get('/invoices?per_page=1')).body.meta.total as number;
const claimOf = (key: string) => ctx.app.db.knex('idempotency_keys').where({ idempotency_key: key }).first<{ owner: string; state: string } | undefined>();

/** Holds a write lock on the invoices table from another connection until `release` is called. */
async function lockInvoices(): Promise<{ release: () => Promise<void> }> {
  const connection: Knex.Transaction = await ctx.app.db.knex.transaction();
  await connection.raw('LOCK TABLES invoices WRITE');
  return {
    release: async () => {
      await connection.raw('UNLOCK TABLES');
      await connection.commit();
    },
  };
}

/**
 * Starts a POST /invoices under a new key while the invoices table is locked, and waits until it
 * has claimed its key: the request is now stalled until `lock.release()`.
 */
async function stalledRequest() {
  const client = await ctx.t.api.post('/clients', { name: 'Stalled', email: `stalled.${randomUUID()}@example.com` });
  const input = anInvoice(client.body.client.id);
  const key = randomUUID();
  const before = await invoiceCount();
  const lock = await lockInvoices();
  const answer = ctx.t.api.post('/invoices', input, withKey(key));
  await eventually(async () => (await claimOf(key)) !== undefined, 5000).catch(async (err) => {
    await lock.release();
    throw err;
  });
  return { input, key, before, lock, answer };
}

onMysql('Idempotency-Key claims held by a live request', () => {
  test('when a request runs well past the lease, then its renewals keep the claim: a retry gets 409 and one invoice is created', async () => {
    // Arrange
    const first = await stalledRequest();

    // Act: the first request stays stuck for three leases, renewing its claim
    const retry = await sleep(3 * LEASE_MS)
      .then(() => ctx.t.api.post('/invoices', first.input, withKey(first.key)))
      .finally(() => first.lock.release());
    const firstAnswer = await first.answer;
    const replay = await ctx.t.api.post('/invoices', first.input, withKey(first.key));

    // Assert
    expect(retry.status).toBe(409);
    expect(retry.body.error).toBe('idempotency_key_in_use');
    expect(firstAnswer.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.invoice.id).toBe(firstAnswer.body.invoice.id);
    expect(await invoiceCount()).toBe(first.before + 1);
  });

  test('when a stalled request lost its claim to a retry, then it cannot settle: its work rolls back and it answers 409', async () => {
    // Arrange
    const first = await stalledRequest();

    // Act: another request takes the claim over, as one would from a request it presumed dead
    try {
      await ctx.app.db.knex('idempotency_keys').where({ idempotency_key: first.key }).update({ owner: randomUUID() });
    } finally {
      await first.lock.release();
    }
    const firstAnswer = await first.answer;

    // Assert
    expect(firstAnswer.status).toBe(409);
    expect(firstAnswer.body.error).toBe('idempotency_key_in_use');
    expect(await invoiceCount()).toBe(first.before);
    expect((await claimOf(first.key))?.state).toBe('in_flight');
  });
});

describe('Idempotency-Key claims whose owner stopped renewing them', () => {
  test('when a claim was not renewed for a whole lease, then a retry takes it over and runs once', async () => {
    // Arrange: a claim as a process that died mid-request leaves it
    const client = await ctx.t.api.post('/clients', { name: 'Dead', email: `dead.${randomUUID()}@example.com` });
    const input = anInvoice(client.body.client.id);
    const key = randomUUID();
    const first = await ctx.t.api.post('/invoices', input, withKey(key));
    await ctx.app.db
      .knex('idempotency_keys')
      .where({ idempotency_key: key })
      .update({ state: 'in_flight', owner: randomUUID(), response_status: null, response_body: null, updated_at: '2000-01-01 00:00:00.000' });
    await ctx.t.api.delete(`/invoices/${first.body.invoice.id}`);
    const before = await invoiceCount();

    // Act
    const retry = await ctx.t.api.post('/invoices', input, withKey(key));
    const replay = await ctx.t.api.post('/invoices', input, withKey(key));

    // Assert
    expect(retry.status).toBe(201);
    expect(replay.body.invoice.id).toBe(retry.body.invoice.id);
    expect(await invoiceCount()).toBe(before + 1);
  });
});
