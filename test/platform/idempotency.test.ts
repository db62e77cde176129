import { randomUUID } from 'node:crypto';
import { toDbTime } from '../../server/db/time';
import { fingerprintOf, purgeExpiredIdempotencyKeys } from '../../server/http/idempotency';
import { aClient, Tenant, useApp } from '../support/app';

const ctx = useApp();

const withKey = (key: string) => ({ headers: { 'Idempotency-Key': key } });
const clientCount = async (tenant: Tenant) => (await tenant.api.get('/clients?per_page=1')).body.meta.total as number;

describe('Idempotency-Key', () => {
  test('when a POST is retried with the same key and body, then the first response is replayed and nothing is created', async () => {
    const key = randomUUID();
    const input = aClient();

    const first = await ctx.t.api.post('/clients', input, withKey(key));
    const count = await clientCount(ctx.t);
    const retry = await ctx.t.api.post('/clients', input, withKey(key));

    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await clientCount(ctx.t)).toBe(count);
  });

  test('when a POST is retried under the other API prefix with the same key, then it is the same request: replayed', async () => {
    const key = randomUUID();
    const input = aClient();

    const first = await ctx.t.api.post('/api/v1/partner/clients', input, withKey(key));
    const retry = await ctx.t.api.post('/api/v1/clients', input, withKey(key));

    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
  });

  test('when the same key comes with a different body, then 422 idempotency_key_reused', async () => {
    const key = randomUUID();
    await ctx.t.api.post('/clients', aClient(), withKey(key));

    const res = await ctx.t.api.post('/clients', aClient(), withKey(key));

    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: 'idempotency_key_reused', message: expect.any(String) });
  });

  test('when 50 identical POSTs race with one key, then exactly one client exists and no answer is a 5xx', async () => {
    const key = randomUUID();
    const input = aClient();
    const before = await clientCount(ctx.t);

    const results = await Promise.all(Array.from({ length: 50 }, () => ctx.t.api.post('/clients', input, withKey(key))));

    expect(results.every((r) => r.status < 500)).toBe(true);
    expect(results.every((r) => r.status === 201 || r.status === 409)).toBe(true);
    const created = results.filter((r) => r.status === 201);
    expect(new Set(created.map((r) => r.body.client.id)).size).toBe(1);
    results
      .filter((r) => r.status === 409)
      .forEach((r) => expect(r.body.error).toBe('idempotency_key_in_use'));
    expect(await clientCount(ctx.t)).toBe(before + 1);
  });

  test('when the first request failed, then the key is free and a corrected retry succeeds', async () => {
    const key = randomUUID();

    const failed = await ctx.t.api.post('/clients', { name: 'No e-mail' }, withKey(key));
    const retried = await ctx.t.api.post('/clients', { name: 'No e-mail' }, withKey(key));

    expect(failed.status).toBe(422);
    expect(retried.status).toBe(422);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
  });

  test('when two credentials use the same key, then each has its own', async () => {
    const key = randomUUID();
    const other = await ctx.app.tenant({ businessId: ctx.t.businessId });

    const mine = await ctx.t.api.post('/clients', aClient(), withKey(key));
    const theirs = await other.api.post('/clients', aClient(), withKey(key));

    expect([mine.status, theirs.status]).toEqual([201, 201]);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
  });

  test.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
  ])('when the key is %s, then it is a 400', async (_case, key) => {
    const res = await ctx.t.api.post('/clients', aClient(), withKey(key));

    expect(res.status).toBe(400);
    expect(res.body.error).toBe('bad_request');
  });

  test('when the key is older than 24 hours, then it is expired: the request runs again and the purge removes old keys', async () => {
    const key = randomUUID();
    const input = aClient();
    const first = await ctx.t.api.post('/clients', input, withKey(key));
    await ctx.t.api.delete(`/clients/${first.body.client.id}`);
    await ctx.app.db.knex('idempotency_keys').where({ idempotency_key: key }).update({ expires_at: toDbTime(new Date(Date.now() - 1000)) });

    const again = await ctx.t.api.post('/clients', input, withKey(key));
    await ctx.app.db.knex('idempotency_keys').where({ idempotency_key: key }).update({ expires_at: toDbTime(new Date(Date.now() - 1000)) });
    const purged = await purgeExpiredIdempotencyKeys(ctx.app.db);

    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(again.body.client.id).not.toBe(first.body.client.id);
    expect(purged).toBeGreaterThanOrEqual(1);
    expect(await ctx.app.db.knex('idempotency_keys').where({ idempotency_key: key })).toHaveLength(0);
  });

  /** A claim as another process would leave it: in flight since `since`. */
  async function claimInFlight(key: string, input: Record<string, unknown>, since: Date): Promise<void> {
    await ctx.app.db.knex('idempotency_keys').insert({
      subject: `key_${ctx.t.keyId}`,
      idempotency_key: key,
      fingerprint: fingerprintOf('POST', '/clients', input),
      state: 'in_flight',
      created_at: toDbTime(since),
      updated_at: toDbTime(since),
      expires_at: toDbTime(new Date(Date.now() + 60_000)),
    });
  }

  test('when a request holding a key is in flight, then a retry gets 409 idempotency_key_in_use', async () => {
    const key = randomUUID();
    const input = aClient();
    await claimInFlight(key, input, new Date());

    const res = await ctx.t.api.post('/clients', input, withKey(key));

    expect(res.status).toBe(409);
    expect(res.body.error).toBe('idempotency_key_in_use');
  });

  test('when an in-flight claim was abandoned over a minute ago, then a retry takes it over and succeeds', async () => {
    const key = randomUUID();
    const input = aClient();
    await claimInFlight(key, input, new Date(Date.now() - 5 * 60_000));

    const res = await ctx.t.api.post('/clients', input, withKey(key));

    expect(res.status).toBe(201);
  });
});
