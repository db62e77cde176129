import { ValidationFailed } from '../../server/errors';
import { startApp, TestApp } from '../support/app';

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
