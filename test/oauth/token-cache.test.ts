/** Resolved access tokens are kept a few seconds per process (at most 5), never past the token's own expiry. */
import { createHash, randomBytes } from 'node:crypto';
import { toDbTime } from '../../server/db/time';
import { Api } from '../support/http';
import { startApp, TestApp } from '../support/app';

let app: TestApp;

beforeAll(async () => {
  app = await startApp({ keyCacheTtlMs: 5000 });
});
afterAll(() => app?.stop());

describe('the access-token cache', () => {
  test('when a cached access token reaches its expiry, then it stops working at once, not when the cache entry would have ended', async () => {
    // Arrange: a token with two seconds to live, resolved (and cached) once
    const services = app.server.services;
    const t = await app.tenant();
    const platform = await services.oauthApps.create({ name: 'Cache Platform', redirectUris: ['https://cache.example/cb'] });
    const owner = await services.owners.create({ businessId: t.businessId, email: `cache.${Date.now()}@acme.example`, password: 'a long enough password' });
    const verifier = randomBytes(32).toString('base64url');
    const code = await services.oauthTokens.issueCode({
      appId: platform.id,
      ownerId: owner.id,
      businessId: t.businessId,
      livemode: false,
      scopes: ['clients:read'],
      redirectUri: 'https://cache.example/cb',
      codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
    });
    const res = await fetch(`${app.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: 'https://cache.example/cb', code_verifier: verifier, client_id: platform.client_id, client_secret: platform.client_secret! }).toString(),
    });
    const token = ((await res.json()) as { access_token: string }).access_token;
    const expiresAt = Date.now() + 2000;
    await app.db.knex('oauth_tokens').where({ token_hash: createHash('sha256').update(token).digest('hex') }).update({ expires_at: toDbTime(new Date(expiresAt)) });
    const api = new Api(app.url, token);
    const before = await api.get('/ping');

    // Act: just past the expiry, well within the 5 s the cache would keep it
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt - Date.now()) + 300));
    const after = await api.get('/ping');

    // Assert
    expect(before.status).toBe(200);
    expect(after.status).toBe(401);
  });
});
