/**
 * `POST /oauth/token` and `POST /oauth/revoke` over HTTP, and access tokens as credentials. Codes
 * come from the service the consent page uses (the pages arrive next); the exchange is real HTTP.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Scope } from '../../server/auth/scopes';
import { aClient, Tenant, useApp } from '../support/app';
import { Api } from '../support/http';

const ctx = useApp({ keyCacheTtlMs: 0 });
const REDIRECT = 'https://platform.example/callback';
const OTHER_REDIRECT = 'https://platform.example/other';

let app: { id: number; client_id: string; client_secret: string | null };
let ownerId: number;

beforeAll(async () => {
  const services = ctx.app.server.services;
  app = await services.oauthApps.create({ name: 'Platform', redirectUris: [REDIRECT, OTHER_REDIRECT] });
  ownerId = (await services.owners.create({ businessId: ctx.t.businessId, email: `owner.${Date.now()}@example.com`, password: 'a long enough password' })).id;
});

const verifier = () => randomBytes(32).toString('base64url');
const challengeOf = (v: string) => createHash('sha256').update(v).digest('base64url');

async function aCode(codeVerifier: string, scopes: Scope[] = ['clients:read'], tenant: Tenant = ctx.t): Promise<string> {
  return ctx.app.server.services.oauthTokens.issueCode({
    appId: app.id,
    ownerId,
    businessId: tenant.businessId,
    livemode: false,
    scopes: [...scopes],
    redirectUri: REDIRECT,
    codeChallenge: challengeOf(codeVerifier),
  });
}

async function tokenRequest(fields: Record<string, string>, secret: string | null = app.client_secret): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${ctx.app.url}/oauth/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(secret ? { authorization: `Basic ${Buffer.from(`${app.client_id}:${secret}`).toString('base64')}` } : {}),
    },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

const exchange = (code: string, codeVerifier: string, secret?: string | null) =>
  tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: codeVerifier }, secret === undefined ? app.client_secret : secret);

const asToken = (token: string) => new Api(ctx.app.url, token);

describe('the authorization-code grant', () => {
  test('when a code is exchanged with its verifier, then the tokens come back and the access token acts for the business within its scopes', async () => {
    // Arrange
    const v = verifier();
    const code = await aCode(v);

    // Act
    const res = await exchange(code, v);
    const api = asToken(res.body.access_token);
    const ping = await api.get('/ping');
    const list = await api.get('/clients');
    const write = await api.post('/clients', aClient());

    // Assert
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({
      access_token: expect.stringMatching(/^oat_test_[0-9A-Za-z]{40}$/),
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: expect.stringMatching(/^ort_test_[0-9A-Za-z]{40}$/),
      scope: 'clients:read',
      business_id: ctx.t.businessId,
      livemode: false,
    });
    expect(ping.body).toMatchObject({ business: { id: ctx.t.businessId }, scopes: ['clients:read'], livemode: false });
    expect(list.status).toBe(200);
    expect(write.status).toBe(403);
    expect(write.body.required_scope).toBe('clients:write');
  });

  test('when a code is used twice, then the second is invalid_grant and what the first issued stops working', async () => {
    const v = verifier();
    const code = await aCode(v);
    const first = await exchange(code, v);

    const second = await exchange(code, v);

    expect(second.status).toBe(400);
    expect(second.body).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });
    expect((await asToken(first.body.access_token).get('/ping')).status).toBe(401);
  });

  test.each([
    ['a wrong verifier', async () => exchange(await aCode(verifier()), verifier()), 400, 'invalid_grant'],
    ['a wrong client secret', async () => { const v = verifier(); return exchange(await aCode(v), v, 'oas_wrong'); }, 401, 'invalid_client'],
    ['another registered redirect_uri', async () => { const v = verifier(); return tokenRequest({ grant_type: 'authorization_code', code: await aCode(v), redirect_uri: OTHER_REDIRECT, code_verifier: v }); }, 400, 'invalid_grant'],
    ['an unknown grant type', () => tokenRequest({ grant_type: 'password', username: 'x', password: 'y' }), 400, 'unsupported_grant_type'],
  ])('when the exchange has %s, then it is the RFC 6749 error', async (_case, send, status, error) => {
    const res = await send();

    expect(res.status).toBe(status);
    expect(res.body.error).toBe(error);
  });

  test.each([
    ['a wrong PKCE verifier', (code: string) => exchange(code, verifier())],
    ['another registered redirect_uri', (code: string, v: string) => tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: OTHER_REDIRECT, code_verifier: v })],
    ['no PKCE verifier', (code: string) => tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT })],
  ])('when a stolen code is presented with %s, then it is invalid_grant and the app that holds the verifier still exchanges it', async (_case, steal) => {
    // Arrange
    const v = verifier();
    const code = await aCode(v);

    // Act
    const stolen = await steal(code, v);
    const rightful = await exchange(code, v);

    // Assert
    expect(stolen.status).toBe(400);
    expect(stolen.body.error).toBe('invalid_grant');
    expect(rightful.status).toBe(200);
    expect((await asToken(rightful.body.access_token).get('/ping')).status).toBe(200);
  });

  test('when a used code is presented again with a wrong verifier, then it is invalid_grant and what the first exchange issued keeps working', async () => {
    // Arrange: the app has exchanged its code; the code leaks (a log, a history), not its verifier
    const v = verifier();
    const code = await aCode(v);
    const first = await exchange(code, v);

    // Act
    const replay = await exchange(code, verifier());

    // Assert
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    expect((await asToken(first.body.access_token).get('/ping')).status).toBe(200);
  });

  test('when another app presents the code, then it is invalid_grant', async () => {
    const other = await ctx.app.server.services.oauthApps.create({ name: 'Other', redirectUris: [REDIRECT] });
    const v = verifier();
    const code = await aCode(v);

    const res = await fetch(`${ctx.app.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: v, client_id: other.client_id, client_secret: other.client_secret! }).toString(),
    });

    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe('invalid_grant');
  });

  test('when a test-mode grant lists clients, then it sees the business\'s test data only', async () => {
    const live = await ctx.app.tenant({ mode: 'live', businessId: ctx.t.businessId });
    const liveClient = (await live.api.post('/clients', aClient())).body.client;
    const testClient = (await ctx.t.api.post('/clients', aClient())).body.client;
    const v = verifier();
    const token = (await exchange(await aCode(v), v)).body.access_token;

    const ids = (await asToken(token).get('/clients?per_page=100')).body.data.map((c: { id: number }) => c.id);

    expect(ids).toContain(testClient.id);
    expect(ids).not.toContain(liveClient.id);
  });

  test('when the code has expired, then it is invalid_grant', async () => {
    const v = verifier();
    const code = await aCode(v);
    await ctx.app.db.knex('oauth_tokens').where({ token_hash: createHash('sha256').update(code).digest('hex') }).update({ expires_at: '2020-01-01 00:00:00.000' });

    const res = await exchange(code, v);

    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
  });

  test('when a token of business A asks for a client of business B, then it is a 404', async () => {
    const other = await ctx.app.tenant();
    const theirs = (await other.api.post('/clients', aClient())).body.client;
    const v = verifier();
    const token = (await exchange(await aCode(v), v)).body.access_token;

    const res = await asToken(token).get(`/clients/${theirs.id}`);

    expect(res.status).toBe(404);
  });
});

describe('a public app', () => {
  test('when it exchanges its code with client_id and the PKCE verifier only, then it gets tokens and can refresh them', async () => {
    // Arrange
    const services = ctx.app.server.services;
    const mobile = await services.oauthApps.create({ name: 'Mobile', redirectUris: [REDIRECT], public: true });
    const v = verifier();
    const code = await services.oauthTokens.issueCode({ appId: mobile.id, ownerId, businessId: ctx.t.businessId, livemode: false, scopes: ['clients:read'], redirectUri: REDIRECT, codeChallenge: challengeOf(v) });
    const form = (fields: Record<string, string>) =>
      fetch(`${ctx.app.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ client_id: mobile.client_id, ...fields }).toString() });

    // Act
    const issued = await form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: v });
    const tokens = (await issued.json()) as { access_token: string; refresh_token: string };
    const refreshed = await form({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token });

    // Assert
    expect(issued.status).toBe(200);
    expect(refreshed.status).toBe(200);
    expect((await asToken(((await refreshed.json()) as { access_token: string }).access_token).get('/ping')).status).toBe(200);
  });
});

describe('the refresh-token grant and revocation', () => {
  test('when a refresh token is used, then it rotates; used again, the whole grant is revoked', async () => {
    // Arrange
    const v = verifier();
    const first = (await exchange(await aCode(v), v)).body;

    // Act
    const refreshed = await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.refresh_token });
    const reused = await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.refresh_token });

    // Assert
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(first.refresh_token);
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe('invalid_grant');
    expect((await asToken(refreshed.body.access_token).get('/ping')).status).toBe(401);
  });

  test('when a refresh asks for fewer scopes, then the new access token holds only those and the new refresh token keeps the grant\'s', async () => {
    // Arrange
    const v = verifier();
    const first = (await exchange(await aCode(v, ['clients:read', 'clients:write']), v)).body;

    // Act
    const narrowed = await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.refresh_token, scope: 'clients:read' });
    const narrowApi = asToken(narrowed.body.access_token);
    const read = await narrowApi.get('/clients');
    const write = await narrowApi.post('/clients', aClient());
    const ping = await narrowApi.get('/ping');
    const again = await tokenRequest({ grant_type: 'refresh_token', refresh_token: narrowed.body.refresh_token });

    // Assert
    expect(narrowed.status).toBe(200);
    expect(narrowed.body.scope).toBe('clients:read');
    expect(ping.body.scopes).toEqual(['clients:read']);
    expect(read.status).toBe(200);
    expect(write.status).toBe(403);
    expect(again.status).toBe(200);
    expect(again.body.scope).toBe('clients:read clients:write');
    expect((await asToken(again.body.access_token).post('/clients', aClient())).status).toBe(201);
  });

  test('when a refresh asks for a scope beyond the grant, then it is invalid_scope and the refresh token still works', async () => {
    // Arrange
    const v = verifier();
    const first = (await exchange(await aCode(v), v)).body;

    // Act
    const wider = await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.refresh_token, scope: 'clients:read clients:write' });
    const plain = await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.refresh_token });

    // Assert
    expect(wider.status).toBe(400);
    expect(wider.body.error).toBe('invalid_scope');
    expect(plain.status).toBe(200);
    expect(plain.body.scope).toBe('clients:read');
  });

  test('when another app presents a refresh token, then it is invalid_grant and the token still works for its own app', async () => {
    // Arrange
    const other = await ctx.app.server.services.oauthApps.create({ name: 'Other platform', redirectUris: [REDIRECT] });
    const v = verifier();
    const first = (await exchange(await aCode(v), v)).body;

    // Act
    const foreign = await fetch(`${ctx.app.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: other.client_id, client_secret: other.client_secret! }).toString(),
    });
    const own = await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.refresh_token });

    // Assert
    expect(foreign.status).toBe(400);
    expect(((await foreign.json()) as { error: string }).error).toBe('invalid_grant');
    expect(own.status).toBe(200);
  });

  test('when a request is retried with a refreshed token under the same Idempotency-Key, then it is the grant\'s key: the response is replayed', async () => {
    // Arrange
    const v = verifier();
    const code = await ctx.app.server.services.oauthTokens.issueCode({
      appId: app.id,
      ownerId,
      businessId: ctx.t.businessId,
      livemode: false,
      scopes: ['clients:write'],
      redirectUri: REDIRECT,
      codeChallenge: challengeOf(v),
    });
    const first = (await exchange(code, v)).body;
    const input = aClient();
    const created = await asToken(first.access_token).post('/clients', input, { headers: { 'Idempotency-Key': 'grant-scoped-1' } });

    // Act
    const refreshed = (await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.refresh_token })).body;
    const retried = await asToken(refreshed.access_token).post('/clients', input, { headers: { 'Idempotency-Key': 'grant-scoped-1' } });

    // Assert
    expect(created.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(retried.body.client.id).toBe(created.body.client.id);
  });

  test('when an access token is revoked (RFC 7009), then it stops working; an unknown token is answered 200 all the same', async () => {
    const v = verifier();
    const issued = (await exchange(await aCode(v), v)).body;
    const auth = { authorization: `Basic ${Buffer.from(`${app.client_id}:${app.client_secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' };

    const revoked = await fetch(`${ctx.app.url}/oauth/revoke`, { method: 'POST', headers: auth, body: new URLSearchParams({ token: issued.access_token }).toString() });
    const unknown = await fetch(`${ctx.app.url}/oauth/revoke`, { method: 'POST', headers: auth, body: new URLSearchParams({ token: 'oat_test_nothing' }).toString() });

    expect(revoked.status).toBe(200);
    expect(unknown.status).toBe(200);
    expect((await asToken(issued.access_token).get('/ping')).status).toBe(401);
  });

  test('when the app is revoked, then its tokens stop working', async () => {
    const services = ctx.app.server.services;
    const gone = await services.oauthApps.create({ name: 'Gone', redirectUris: [REDIRECT] });
    const v = verifier();
    const code = await services.oauthTokens.issueCode({ appId: gone.id, ownerId, businessId: ctx.t.businessId, livemode: false, scopes: ['clients:read'], redirectUri: REDIRECT, codeChallenge: challengeOf(v) });
    const res = await fetch(`${ctx.app.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: v, client_id: gone.client_id, client_secret: gone.client_secret! }).toString(),
    });
    const token = ((await res.json()) as { access_token: string }).access_token;

    await services.oauthApps.revoke(gone.id);

    expect((await asToken(token).get('/ping')).status).toBe(401);
  });
});
