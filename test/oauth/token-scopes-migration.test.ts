/**
 * 20261125130000 gives every existing code and token its own scopes, those of its grant, so the
 * tokens out at the upgrade keep working with what the owner approved.
 */
import { migrateDown, migrateLatest } from '../../server/db/migrate';
import { Api } from '../support/http';
import { startApp, TestApp, TEST_APP_SECRET_KEY } from '../support/app';
import { anAuthorizedApp } from '../support/oauth';

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
    const t = await app.tenant();
    const { appId, accessToken } = await anAuthorizedApp(app, t.businessId, 'Upgrade Platform', ['clients:read', 'invoices:read']);
    await migrateDown(app.db.knex, MIGRATION, withKey);

    // Act
    await migrateLatest(app.db.knex, withKey);

    // Assert
    const rows = await app.db.knex('oauth_tokens').join('oauth_grants', 'oauth_grants.id', 'oauth_tokens.grant_id').where('oauth_grants.app_id', appId).select('oauth_tokens.scopes');
    expect(rows.map((row: { scopes: string }) => JSON.parse(row.scopes))).toEqual([
      ['clients:read', 'invoices:read'],
      ['clients:read', 'invoices:read'],
      ['clients:read', 'invoices:read'],
    ]);
    expect((await new Api(app.url, accessToken).get('/ping')).body.scopes).toEqual(['clients:read', 'invoices:read']);
  });
});
