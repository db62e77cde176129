import { ConfigError, loadConfig } from '../../server/config';

describe('configuration', () => {
  test('when nothing is set, then the embedded database and the documented defaults apply', () => {
    const config = loadConfig({});

    expect(config).toMatchObject({
      databaseUrl: 'sqlite:./data/invoicing.sqlite3',
      port: 3000,
      host: '0.0.0.0',
      baseUrl: 'http://localhost:3000',
      rateLimitPerMinute: 120,
      keyCacheTtlMs: 5000,
      webhookAllowPrivate: false,
    });
  });

  test.each([
    [{ DATABASE_URL: 'postgres://x/y' }, 'DATABASE_URL'],
    [{ RATE_LIMIT_PER_MINUTE: 'lots' }, 'RATE_LIMIT_PER_MINUTE'],
    [{ KEY_CACHE_TTL_MS: '60000' }, 'KEY_CACHE_TTL_MS'],
    [{ PORT: '-1' }, 'PORT'],
    [{ HOST: '127.0.0.1:3000' }, 'HOST'],
  ])('when %j is set, then boot fails naming the key', (env, key) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(key);
  });
});
