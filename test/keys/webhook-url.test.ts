import { ValidationFailed } from '../../server/errors';
import { sendWebhook } from '../../server/webhooks/sender';
import { startApp, TestApp } from '../support/app';
import { requireBuild, runCli } from '../support/cli';

// The contract's production setting: private addresses refused.
let app: TestApp;
let businessId: number;

beforeAll(async () => {
  app = await startApp({ webhookAllowPrivate: false });
  businessId = (await app.server.services.businesses.create({ name: 'Hooks Co', currency: 'USD', country: 'US' })).id;
});
afterAll(() => app?.stop());

function createKey(webhookUrl: string) {
  return app.server.services.keys.create({ businessId, mode: 'test', scopes: ['invoices:read'], webhookUrl });
}

describe('webhook URLs of keys', () => {
  test.each(['http://[::127.0.0.1]/hook', 'http://[64:ff9b::192.168.0.1]/hook', 'http://[2002:a00:1::1]/hook', 'http://[fec0::1]/hook'])(
    'when a key is created with %s, an IPv6 form of a private address, then it is refused on webhook_url',
    async (url) => {
      const refused = await createKey(url).catch((err: unknown) => err);

      expect(refused).toBeInstanceOf(ValidationFailed);
      expect((refused as ValidationFailed).details).toEqual({ webhook_url: [expect.stringMatching(/private/)] });
    },
  );

  test('when a key is given such a URL by an update, then it is refused and the key keeps its own', async () => {
    const key = await createKey('https://hooks.example.com/in');

    const refused = await app.server.services.keys.update(key.id, { webhookUrl: 'http://[::127.0.0.1]/hook' }).catch((err: unknown) => err);

    expect(refused).toBeInstanceOf(ValidationFailed);
    expect((await app.db.knex('api_keys').where({ id: key.id }).first()).webhook_url).toBe('https://hooks.example.com/in');
  });

  test('when a key is created with a NAT64 form of a public address, then it is accepted', async () => {
    const key = await createKey('http://[64:ff9b::8.8.8.8]/hook');

    expect(key.webhook_url).toMatch(/^http:\/\/\[64:ff9b::/);
  });
});

/** Loopback names as a person may spell them: a trailing dot (the DNS root), upper case, a port. */
const LOOPBACK_SPELLINGS = ['http://localhost./', 'http://LOCALHOST./', 'http://sub.localhost./', 'http://localhost.:3000/', 'http://localhost../hook', 'http://Sub.LocalHost.:8080/hook'];
/** Addresses the URL parser rewrites (IPv4 shorthand, hex, a single number, mapped IPv6) or names outright. */
const LOOPBACK_ADDRESSES = ['http://127.1/', 'http://0x7f.1/', 'http://2130706433/', 'http://127.0.0.1./', 'http://[::ffff:127.0.0.1]/', 'http://[::1]/', 'http://0.0.0.0/', 'http://%6cocalhost./', 'http://ｌｏｃａｌｈｏｓｔ./'];

describe('loopback names, however they are spelled', () => {
  test.each([...LOOPBACK_SPELLINGS, ...LOOPBACK_ADDRESSES])('when a key is created with %s, then it is refused on webhook_url', async (url) => {
    // Act
    const refused = await createKey(url).catch((err: unknown) => err);

    // Assert
    expect(refused).toBeInstanceOf(ValidationFailed);
    expect((refused as ValidationFailed).details).toEqual({ webhook_url: [expect.stringMatching(/private, loopback/)] });
  });

  test.each(LOOPBACK_SPELLINGS)('when a key is updated to %s, then it is refused and the key keeps its URL', async (url) => {
    // Arrange
    const key = await createKey('https://hooks.example.com/in');

    // Act
    const refused = await app.server.services.keys.update(key.id, { webhookUrl: url }).catch((err: unknown) => err);

    // Assert
    expect(refused).toBeInstanceOf(ValidationFailed);
    expect((await app.db.knex('api_keys').where({ id: key.id }).first()).webhook_url).toBe('https://hooks.example.com/in');
  });

  test.each(LOOPBACK_SPELLINGS)('when an OAuth app is created with %s, then it is refused on webhook_url', async (url) => {
    // Act
    const refused = await app.server.services.oauthApps
      .create({ name: 'Loopback App', redirectUris: ['https://app.example/cb'], webhookUrl: url })
      .catch((err: unknown) => err);

    // Assert
    expect(refused).toBeInstanceOf(ValidationFailed);
    expect((refused as ValidationFailed).details).toEqual({ webhook_url: [expect.stringMatching(/private, loopback/)] });
  });

  test('when a public name ends with the root dot, then it is accepted as written', async () => {
    // Act
    const key = await createKey('https://hooks.example.com./in');

    // Assert
    expect(key.webhook_url).toBe('https://hooks.example.com./in');
  });

  test.each(['http://localhost.:9/', 'http://sub.localhost./', 'http://127.1:9/'])(
    'when a delivery is sent to %s without WEBHOOK_ALLOW_PRIVATE, then nothing is sent and the address is refused',
    async (url) => {
      // Act
      const result = await sendWebhook(url, Buffer.from('{}'), { 'content-type': 'application/json' }, { allowPrivate: false, timeoutMs: 2000 });

      // Assert
      expect(result).toMatchObject({ statusCode: null, refusedAddress: true, error: expect.stringMatching(/private|loopback/) });
    },
  );
});

describe('the CLI, with a loopback name spelled with a trailing dot', () => {
  beforeAll(() => requireBuild());

  test.each(['http://localhost./', 'http://LOCALHOST./', 'http://sub.localhost./', 'http://localhost.:3000/'])(
    'when `keys create`, `keys update` and `oauth apps create` are given %s, then each refuses it, naming what was typed, and exits 2',
    async (url) => {
      // Arrange
      const key = await createKey('https://hooks.example.com/in');

      // Act
      const created = await runCli(app.databaseUrl, ['keys', 'create', '--business', String(businessId), '--mode', 'test', '--scopes', 'all', '--webhook-url', url]);
      const updated = await runCli(app.databaseUrl, ['keys', 'update', String(key.id), '--webhook-url', url]);
      const registered = await runCli(app.databaseUrl, ['oauth', 'apps', 'create', '--name', 'Loopback', '--redirect-uri', 'https://app.example/cb', '--webhook-url', url]);

      // Assert
      for (const result of [created, updated, registered]) {
        expect(result.code).toBe(2);
        expect(result.stderr).toContain(`--webhook-url ${JSON.stringify(url)}: `);
        expect(result.stderr).toMatch(/private, loopback/);
      }
    },
    60_000,
  );
});
