import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../server/config';
import { loadAppKey } from '../../server/keys/app-key';
import { newKeySchema } from '../../server/keys/schema';
import { SecretBox } from '../../server/keys/secret-box';
import { validateInput } from '../../server/validation';
import { startApp, TestApp, TEST_APP_SECRET_KEY } from '../support/app';

const SECRET = 'whsec_0123456789abcdef';
let app: TestApp;
let businessId: number;

beforeAll(async () => {
  app = await startApp();
  businessId = (await app.server.services.businesses.create({ name: 'Hooks Co', currency: 'USD', country: 'US' })).id;
});
afterAll(() => app?.stop());

/** As the CLI creates one: the input validated by the key schema first. */
async function createKey(webhookSecret?: string) {
  return app.server.services.keys.create(validateInput(newKeySchema, { businessId, mode: 'test', scopes: ['invoices:read'], webhookUrl: 'http://127.0.0.1:9/hook', webhookSecret }));
}

async function storedSecret(id: number): Promise<string> {
  const row = await app.db.knex('api_keys').where({ id }).first();
  return row.webhook_secret;
}

describe('webhook secrets at rest', () => {
  test('when a key is created with a webhook secret, then it is returned once in clear and the row holds only a sealed value', async () => {
    const created = await createKey(SECRET);
    const stored = await storedSecret(created.id);

    expect(created.webhook_secret).toBe(SECRET);
    expect(stored).toMatch(/^v2\./);
    expect(stored).not.toContain(SECRET);
    expect(stored).not.toContain('0123456789abcdef');
    expect(new SecretBox(Buffer.from(TEST_APP_SECRET_KEY, 'base64'), 'webhook_secret').open(stored, { table: 'api_keys', column: 'webhook_secret', id: created.id, businessId })).toBe(SECRET);
    expect(await app.server.services.keys.webhookSecret(created.id)).toBe(SECRET);
  });

  test('when the secret is generated, then the clear one returned at creation is what webhookSecret gives back', async () => {
    const created = await createKey();

    expect(created.webhook_secret).toMatch(/^whsec_/);
    expect(await storedSecret(created.id)).not.toContain(created.webhook_secret!);
    expect(await app.server.services.keys.webhookSecret(created.id)).toBe(created.webhook_secret);
  });

  test('when a secret of the longest accepted size is sealed, then it fits the column and reads back', async () => {
    const longest = `whsec_${'é'.repeat(72)}`; // 150 bytes in UTF-8

    const created = await createKey(longest);

    expect((await storedSecret(created.id)).length).toBeLessThanOrEqual(255);
    expect(await app.server.services.keys.webhookSecret(created.id)).toBe(longest);
    await expect(createKey(`${longest}x`)).rejects.toThrow();
  });

  test('when a key is rotated, then the new key signs with the same secret, sealed anew, and the old one still reads it', async () => {
    const created = await createKey(SECRET);

    const rotated = await app.server.services.keys.rotate(created.id);

    expect(rotated.webhook_secret).toBe(SECRET);
    expect(await app.server.services.keys.webhookSecret(rotated.id)).toBe(SECRET);
    expect(await app.server.services.keys.webhookSecret(created.id)).toBe(SECRET);
    expect(await storedSecret(rotated.id)).not.toContain(SECRET);
    expect(await storedSecret(rotated.id)).not.toBe(await storedSecret(created.id));
  });

  test('when a key has no webhook, then it has no secret', async () => {
    const created = await app.server.services.keys.create({ businessId, mode: 'test', scopes: ['invoices:read'] });

    expect(await app.server.services.keys.webhookSecret(created.id)).toBeNull();
  });

  test('when a stored secret is in clear text or sealed under another key, then reading it fails instead of signing with it', async () => {
    const clear = await createKey(SECRET);
    await app.db.knex('api_keys').where({ id: clear.id }).update({ webhook_secret: SECRET });
    const foreign = await createKey(SECRET);
    await app.db.knex('api_keys').where({ id: foreign.id }).update({ webhook_secret: new SecretBox(randomBytes(32)).seal(SECRET, { table: 'api_keys', column: 'webhook_secret', id: foreign.id, businessId }) });

    await expect(app.server.services.keys.webhookSecret(clear.id)).rejects.toThrow(/not in the v2/);
    await expect(app.server.services.keys.webhookSecret(foreign.id)).rejects.toThrow(/another application key/);
    await expect(app.server.services.keys.rotate(foreign.id)).rejects.toThrow(/another application key/);
    expect((await app.server.services.keys.get(foreign.id)).revoked_at).toBeNull();
  });
});

describe('loadAppKey', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'app-key-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** An embedded database in `dir/db`; the legacy ./data is `dir/legacy`. */
  const embedded = () => ({ databaseUrl: `sqlite:${path.join(dir, 'db', 'invoicing.sqlite3')}` });
  const legacyDir = () => path.join(dir, 'legacy');

  test('when no key is configured, then one is generated beside the database file, 0600, on first run and reused after', () => {
    const first = loadAppKey(embedded(), legacyDir());
    const file = path.join(dir, 'db', 'app-secret.key');
    const written = fs.readFileSync(file, 'utf8');
    const second = loadAppKey(embedded(), legacyDir());

    expect(first).toHaveLength(32);
    expect(second.equals(first)).toBe(true);
    expect(fs.readFileSync(file, 'utf8')).toBe(written);
    expect(fs.existsSync(legacyDir())).toBe(false);
    if (process.platform !== 'win32') expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  test('when only ./data/app-secret.key of an earlier version exists, then its key is used and copied beside the database', () => {
    const legacy = randomBytes(32);
    fs.mkdirSync(legacyDir());
    fs.writeFileSync(path.join(legacyDir(), 'app-secret.key'), `${legacy.toString('base64')}\n`, { mode: 0o600 });

    expect(loadAppKey(embedded(), legacyDir()).equals(legacy)).toBe(true);
    fs.rmSync(legacyDir(), { recursive: true });
    expect(loadAppKey(embedded(), legacyDir()).equals(legacy)).toBe(true);
  });

  test('when both files exist, then the one beside the database wins', () => {
    const beside = loadAppKey(embedded(), legacyDir());
    fs.mkdirSync(legacyDir());
    fs.writeFileSync(path.join(legacyDir(), 'app-secret.key'), `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });

    expect(loadAppKey(embedded(), legacyDir()).equals(beside)).toBe(true);
  });

  test('when the database is MySQL and no key is configured, then it is refused in one line saying how to make one, and no file is written', () => {
    const mysql = { databaseUrl: 'mysql://app@127.0.0.1/invoicing' };

    expect(() => loadAppKey(mysql, dir)).toThrow(ConfigError);
    expect(() => loadAppKey(mysql, dir)).toThrow(/^APP_SECRET_KEY is required[^\n]*openssl rand -base64 32\)$/);
    expect(() => loadConfig({ DATABASE_URL: mysql.databaseUrl })).toThrow(/APP_SECRET_KEY is required/);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  test('when a key is configured, then it is used and no file is written', () => {
    const key = randomBytes(32);

    expect(loadAppKey({ ...embedded(), appSecretKey: key.toString('base64') }, dir).equals(key)).toBe(true);
    expect(loadAppKey({ ...embedded(), appSecretKey: key.toString('hex') }, dir).equals(key)).toBe(true);
    expect(loadAppKey({ ...embedded(), appSecretKey: key.toString('base64url') }, dir).equals(key)).toBe(true);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  test.each([randomBytes(16).toString('base64'), randomBytes(33).toString('base64'), 'not a key at all', ''])(
    'when the configured key is %j, then it is refused in one line naming APP_SECRET_KEY',
    (value) => {
      expect(() => loadAppKey({ ...embedded(), appSecretKey: value }, dir)).toThrow(ConfigError);
      expect(() => loadAppKey({ ...embedded(), appSecretKey: value }, dir)).toThrow(/^APP_SECRET_KEY must be 32 bytes[^\n]*$/);
    },
  );

  test('when the key file is damaged, then it is refused, not replaced', () => {
    fs.mkdirSync(path.join(dir, 'db'));
    fs.writeFileSync(path.join(dir, 'db', 'app-secret.key'), 'short\n', { mode: 0o600 });

    expect(() => loadAppKey(embedded(), legacyDir())).toThrow(/does not hold a 32-byte/);
    expect(fs.readFileSync(path.join(dir, 'db', 'app-secret.key'), 'utf8')).toBe('short\n');
  });
});

/** Swaps the values of `columns` between rows `a` and `b` of `table`, as a database writer could. */
async function swap(table: string, columns: string[], a: number, b: number): Promise<void> {
  const [rowA, rowB] = await Promise.all([app.db.knex(table).where({ id: a }).first(), app.db.knex(table).where({ id: b }).first()]);
  const pick = (row: Record<string, unknown>) => Object.fromEntries(columns.map((column) => [column, row[column]]));
  await app.db.knex(table).where({ id: a }).update(pick(rowB));
  await app.db.knex(table).where({ id: b }).update(pick(rowA));
}

describe('sealed secrets are bound to their row and business', () => {
  test('when two keys swap their sealed webhook secrets, then neither opens, with a clear error', async () => {
    // Arrange
    const other = (await app.server.services.businesses.create({ name: 'Other Co', currency: 'USD', country: 'US' })).id;
    const mine = await createKey(SECRET);
    const theirs = await app.server.services.keys.create({ businessId: other, mode: 'test', scopes: ['invoices:read'], webhookUrl: 'http://127.0.0.1:9/hook', webhookSecret: 'whsec_theirs_0123456789' });
    const sameBusiness = await createKey('whsec_sibling_0123456789');

    // Act
    await swap('api_keys', ['webhook_secret'], mine.id, theirs.id);

    // Assert
    await expect(app.server.services.keys.webhookSecret(mine.id)).rejects.toThrow(/api_keys.webhook_secret of row \d+: it was altered, copied from another row/);
    await expect(app.server.services.keys.webhookSecret(theirs.id)).rejects.toThrow(/copied from another row/);
    await swap('api_keys', ['webhook_secret'], mine.id, theirs.id);
    await swap('api_keys', ['webhook_secret'], mine.id, sameBusiness.id);
    await expect(app.server.services.keys.webhookSecret(mine.id)).rejects.toThrow(/copied from another row/);
    await expect(app.server.services.keys.webhookSecret(sameBusiness.id)).rejects.toThrow(/copied from another row/);
  });

  test('when two OAuth apps swap their sealed webhook secrets, then neither opens', async () => {
    // Arrange
    const one = await app.server.services.oauthApps.create({ name: 'One', redirectUris: ['https://one.example/cb'], webhookUrl: 'http://127.0.0.1:9/one' });
    const two = await app.server.services.oauthApps.create({ name: 'Two', redirectUris: ['https://two.example/cb'], webhookUrl: 'http://127.0.0.1:9/two' });
    const openStored = async (id: number) => app.server.services.oauthApps.openWebhookSecret((await app.db.knex('oauth_apps').where({ id }).first()).webhook_secret_sealed, id);
    expect(await openStored(one.id)).toBe(one.webhook_secret);

    // Act
    await swap('oauth_apps', ['webhook_secret_sealed'], one.id, two.id);

    // Assert
    await expect(openStored(one.id)).rejects.toThrow(/oauth_apps.webhook_secret_sealed of row \d+: it was altered, copied from another row/);
    await expect(openStored(two.id)).rejects.toThrow(/copied from another row/);
  });

  test('when two businesses swap their sealed gateway credentials, then a Stripe notification to either is a 502 gateway_error naming the fix, never a 500', async () => {
    // Arrange
    const credentials = (n: number) => ({ provider: 'stripe' as const, secretKey: `sk_live_bindingTest${n}AbCdEf`, webhookSecret: `whsec_bindingTest${n}AbCdEf` });
    const first = (await app.server.services.businesses.create({ name: 'Gate One', currency: 'USD', country: 'US' })).id;
    const second = (await app.server.services.businesses.create({ name: 'Gate Two', currency: 'USD', country: 'US' })).id;
    await app.server.services.gateways.set(first, credentials(1));
    await app.server.services.gateways.set(second, credentials(2));
    const rowOf = async (businessId: number) => (await app.db.knex('payment_gateways').where({ business_id: businessId }).first()).id as number;
    const notify = (businessId: number) =>
      fetch(`${app.url}/gateway/stripe/${businessId}/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' }, body: '{}' });
    const before = await notify(first);

    // Act
    await swap('payment_gateways', ['secret_key_sealed', 'webhook_secret_sealed'], await rowOf(first), await rowOf(second));
    const answers = [await notify(first), await notify(second)];

    // Assert
    expect(before.status).toBe(400);
    for (const answer of answers) {
      expect(answer.status).toBe(502);
      const body = await answer.json();
      expect(body).toEqual({ error: 'gateway_error', message: expect.stringContaining('invoicing business gateway set') });
      expect(JSON.stringify(body)).not.toMatch(/aes|sealed|v2\./i);
    }
  });

  test('when a gateway row swaps its own secret key and webhook secret, then they do not open either', async () => {
    // Arrange
    const business = (await app.server.services.businesses.create({ name: 'Gate Three', currency: 'USD', country: 'US' })).id;
    await app.server.services.gateways.set(business, { provider: 'stripe', secretKey: 'sk_live_bindingTest3AbCdEf', webhookSecret: 'whsec_bindingTest3AbCdEf' });
    const row = await app.db.knex('payment_gateways').where({ business_id: business }).first();

    // Act
    await app.db.knex('payment_gateways').where({ id: row.id }).update({ secret_key_sealed: row.webhook_secret_sealed, webhook_secret_sealed: row.secret_key_sealed });
    const answer = await fetch(`${app.url}/gateway/stripe/${business}/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' }, body: '{}' });

    // Assert
    expect(answer.status).toBe(502);
  });
});
