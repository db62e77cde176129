import { aClient, startApp, useApp } from '../support/app';

const ctx = useApp({ keyCacheTtlMs: 5000 });

describe('authentication', () => {
  test.each([
    ['no Authorization header', {}],
    ['a non-Bearer scheme', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }],
    ['an unknown key', { authorization: `Bearer svc_test_${'a'.repeat(40)}` }],
    ['a malformed key', { authorization: 'Bearer not-a-key' }],
    ['an empty bearer', { authorization: 'Bearer ' }],
  ])('when a request has %s, then it is a 401 with the error body', async (_case, headers) => {
    const res = await ctx.app.api().get('/clients', { headers });

    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'unauthorized', message: expect.any(String) });
  });

  test('when a key is revoked, then it is refused within 5 seconds', async () => {
    const doomed = await ctx.app.tenant({ businessId: ctx.t.businessId });
    expect((await doomed.api.get('/ping')).status).toBe(200);

    await ctx.app.server.services.keys.revoke(doomed.keyId);

    expect((await doomed.api.get('/ping')).status).toBe(401);
  });

  test('when a key is looked up, then only its hash is stored', async () => {
    const rows = await ctx.app.db.knex('api_keys').select('*');

    const values = JSON.stringify(rows);
    expect(values).not.toContain(ctx.t.key);
    expect(values).toContain(ctx.t.key.slice(-4));
  });
});

describe('scopes', () => {
  test('when a key lacks the scope, then 403 names the required scope and the key scopes', async () => {
    const reader = await ctx.app.tenant({ scopes: ['invoices:read'], businessId: ctx.t.businessId });

    const res = await reader.api.post('/clients', aClient());

    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      error: 'forbidden',
      message: expect.any(String),
      required_scope: 'clients:write',
      key_scopes: ['invoices:read'],
    });
  });

  test('when a key holds clients:write, then it may also read clients', async () => {
    const writer = await ctx.app.tenant({ scopes: ['clients:write'], businessId: ctx.t.businessId });

    const res = await writer.api.get('/clients');

    expect(res.status).toBe(200);
  });

  test('when a key holds only clients:read, then it may not write', async () => {
    const reader = await ctx.app.tenant({ scopes: ['clients:read'], businessId: ctx.t.businessId });

    const res = await reader.api.delete('/clients/1');

    expect(res.status).toBe(403);
    expect(res.body.required_scope).toBe('clients:write');
  });
});

describe('modes', () => {
  test('when a live key lists clients, then it sees no test-mode client, and the reverse', async () => {
    const live = await ctx.app.tenant({ mode: 'live', businessId: ctx.t.businessId });
    await ctx.t.api.post('/clients', aClient());
    await live.api.post('/clients', aClient());

    const liveList = await live.api.get('/clients');
    const testList = await ctx.t.api.get('/clients');

    expect(liveList.body.data.every((c: { livemode: boolean }) => c.livemode)).toBe(true);
    expect(testList.body.data.every((c: { livemode: boolean }) => !c.livemode)).toBe(true);
    expect((await live.api.get('/ping')).body.livemode).toBe(true);
  });
});

describe('failed authentications per IP', () => {
  test('when an address keeps failing, then its failures get 429 but a valid key from it is still served', async () => {
    const strict = await startApp({ authFailuresPerMinute: 3 });
    const good = await strict.tenant();
    const stranger = strict.api(`svc_test_${'b'.repeat(40)}`);

    const failures = [await stranger.get('/ping'), await stranger.get('/ping'), await stranger.get('/ping')];
    const blocked = await stranger.get('/ping');
    const goodKeyFromSameAddress = await good.api.get('/ping');

    expect(failures.map((r) => r.status)).toEqual([401, 401, 401]);
    expect(blocked.status).toBe(429);
    expect(blocked.body).toEqual({ error: 'rate_limited', message: expect.any(String) });
    expect(blocked.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(goodKeyFromSameAddress.status).toBe(200);
    await strict.stop();
  });
});
