/**
 * 20261125140000 re-seals the secrets sealed before they were bound to their rows (v1, bound to
 * their purpose only) as v2 values bound to table, column, row id and business; `invoicing migrate`
 * gives it the application key, and without one it refuses rather than leave secrets unreadable.
 */
import { migrateDown, migrateLatest } from '../../server/db/migrate';
import { SecretBox } from '../../server/keys/secret-box';
import { startApp, TestApp, TEST_APP_SECRET_KEY } from '../support/app';
import { requireBuild, runCli } from '../support/cli';

const MIGRATION = '20261125140000_bind_sealed_secrets_to_rows';
const APP_KEY = Buffer.from(TEST_APP_SECRET_KEY, 'base64');
const withKey = { appKey: () => APP_KEY };

let app: TestApp;

beforeAll(async () => {
  requireBuild();
  app = await startApp();
});
afterAll(() => app?.stop());

/** A key, an OAuth app and a gateway with sealed secrets, as the current code seals them. */
async function sealedRows() {
  const businessId = (await app.server.services.businesses.create({ name: 'Old Secrets Co', currency: 'USD', country: 'US' })).id;
  const key = await app.server.services.keys.create({ businessId, mode: 'live', scopes: ['invoices:read'], webhookUrl: 'http://127.0.0.1:9/hook', webhookSecret: 'whsec_old_key_0123456789' });
  const oauthApp = await app.server.services.oauthApps.create({ name: 'Old App', redirectUris: ['https://old.example/cb'], webhookUrl: 'http://127.0.0.1:9/app' });
  await app.server.services.gateways.set(businessId, { provider: 'stripe', secretKey: 'sk_live_oldGateway0123AbCd', webhookSecret: 'whsec_oldGateway0123AbCd' });
  return { businessId, key, oauthApp };
}

async function storedValues(rows: { businessId: number; key: { id: number }; oauthApp: { id: number } }): Promise<string[]> {
  const key = await app.db.knex('api_keys').where({ id: rows.key.id }).first();
  const oauthApp = await app.db.knex('oauth_apps').where({ id: rows.oauthApp.id }).first();
  const gateway = await app.db.knex('payment_gateways').where({ business_id: rows.businessId }).first();
  return [key.webhook_secret, oauthApp.webhook_secret_sealed, gateway.secret_key_sealed, gateway.webhook_secret_sealed];
}

function notifyGateway(businessId: number): Promise<Response> {
  return fetch(`${app.url}/gateway/stripe/${businessId}/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' }, body: '{}' });
}

describe('re-sealing secrets bound to their rows', () => {
  test('when secrets sealed the old way (v1) are migrated, then they are v2, open in their own rows, and signing and the gateway work', async () => {
    // Arrange: back to v1, as before the migration
    const rows = await sealedRows();
    await migrateDown(app.db.knex, MIGRATION, withKey);
    const old = await storedValues(rows);
    expect(old.map((value) => value.slice(0, 3))).toEqual(['v1.', 'v1.', 'v1.', 'v1.']);
    expect(new SecretBox(APP_KEY, 'gateway_secret').openUnbound(old[2])).toBe('sk_live_oldGateway0123AbCd');
    await expect(app.server.services.keys.webhookSecret(rows.key.id)).rejects.toThrow(/not in the v2/);

    // Act
    await migrateLatest(app.db.knex, withKey);

    // Assert
    const resealed = await storedValues(rows);
    expect(resealed.map((value) => value.slice(0, 3))).toEqual(['v2.', 'v2.', 'v2.', 'v2.']);
    expect(await app.server.services.keys.webhookSecret(rows.key.id)).toBe('whsec_old_key_0123456789');
    expect(app.server.services.oauthApps.openWebhookSecret(resealed[1], rows.oauthApp.id)).toBe(rows.oauthApp.webhook_secret);
    expect((await notifyGateway(rows.businessId)).status).toBe(400); // opened, then the made-up signature is refused
  });

  test('when v1 secrets are waiting and the migration runs without the application key, then it fails saying so and changes nothing', async () => {
    // Arrange
    const rows = await sealedRows();
    await migrateDown(app.db.knex, MIGRATION, withKey);
    const old = await storedValues(rows);

    // Act
    const refused = await migrateLatest(app.db.knex).catch((err: unknown) => err);

    // Assert
    expect(String(refused)).toMatch(/needs the application key \(APP_SECRET_KEY\)/);
    expect(await storedValues(rows)).toEqual(old);
    await migrateLatest(app.db.knex, withKey);
  });

  test('when `invoicing migrate` runs with APP_SECRET_KEY over v1 secrets, then it re-seals them', async () => {
    // Arrange
    const rows = await sealedRows();
    await migrateDown(app.db.knex, MIGRATION, withKey);

    // Act
    const migrated = await runCli(app.databaseUrl, ['migrate', '--json']);

    // Assert
    expect(migrated.code).toBe(0);
    expect(JSON.parse(migrated.stdout)).toEqual({ applied: [MIGRATION] });
    expect((await storedValues(rows)).map((value) => value.slice(0, 3))).toEqual(['v2.', 'v2.', 'v2.', 'v2.']);
    expect(await app.server.services.keys.webhookSecret(rows.key.id)).toBe('whsec_old_key_0123456789');
  });
});
