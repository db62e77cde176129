/**
 * 20261125130000 gives every existing code and token its own scopes, those of its grant, so the
 * tokens out at the upgrade keep working with what the owner approved.
 */
import { createHash, randomBytes } from 'node:crypto';
import { migrateDown, migrateLatest } from '../../server/db/migrate';
import { Api } from '../support/http';
import { startApp, TestApp, TEST_APP_SECRET_KEY } from '../support/app';

const MIGRATION = '20261125130000_add_scopes_to_oauth_tokens';
const withKey = { appKey: () => Buffer.from(TEST_APP_SECRET_KEY, 'base64') };
let app: TestApp;

beforeAll(async () => {
  app = await startApp({ keyCacheTtlMs: 0 });
});
afterAll(() => app?.stop());

describe('per-token scopes at the upgrade', () => {
  test('when tokens issued before the migration are migrated, then each gets its grant\'s scopes and the access token still acts within them', async () => {
    // Arrange: a grant with tokens, then the database as it was before the migration
    const services = app.server.services;
    const t = await app.tenant();
    const platform = await services.oauthApps.create({ name: 'Upgrade Platform', redirectUris: ['https://upgrade.example/cb'] });
    const owner = await services.owners.create({ businessId: t.businessId, email: `upgrade.${Date.now()}@acme.example`, password: 'a long enough password' });
    const verifier = randomBytes(32).toString('base64url');
    const code = await services.oauthTokens.issueCode({
      appId: platform.id,
      ownerId: owner.id,
      businessId: t.businessId,
      livemode: false,
      scopes: ['clients:read', 'invoices:read'],
      redirectUri: 'https://upgrade.example/cb',
      codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
    });
    const issued = await fetch(`${app.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: 'https://upgrade.example/cb', code_verifier: verifier, client_id: platform.client_id, client_secret: platform.client_secret! }).toString(),
    });
    const { access_token: accessToken } = (await issued.json()) as { access_token: string };
    await migrateDown(app.db.knex, MIGRATION, withKey);

    // Act
    await migrateLatest(app.db.knex, withKey);

    // Assert
    const rows = await app.db.knex('oauth_tokens').join('oauth_grants', 'oauth_grants.id', 'oauth_tokens.grant_id').where('oauth_grants.app_id', platform.id).select('oauth_tokens.scopes');
    expect(rows.map((row: { scopes: string }) => JSON.parse(row.scopes))).toEqual([
      ['clients:read', 'invoices:read'],
      ['clients:read', 'invoices:read'],
      ['clients:read', 'invoices:read'],
    ]);
    expect((await new Api(app.url, accessToken).get('/ping')).body.scopes).toEqual(['clients:read', 'invoices:read']);
  });
});
