/** Resolved access tokens are kept a few seconds per process (at most 5), never past the token's own expiry. */
import { createHash } from 'node:crypto';
import { toDbTime } from '../../server/db/time';
import { Api } from '../support/http';
import { startApp, TestApp } from '../support/app';
import { anAuthorizedApp } from '../support/oauth';

let app: TestApp;

beforeAll(async () => {
  app = await startApp({ keyCacheTtlMs: 5000 });
});
afterAll(() => app?.stop());

describe('the access-token cache', () => {
  test('when a cached access token reaches its expiry, then it stops working at once, not when the cache entry would have ended', async () => {
    // Arrange: a token with two seconds to live, resolved (and cached) once
    const t = await app.tenant();
    const { accessToken: token } = await anAuthorizedApp(app, t.businessId, 'Cache Platform', ['clients:read']);
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
