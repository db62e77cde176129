import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { startApp, TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { startTcpProxy } from '../support/tcp-proxy';

describe('per-credential rate limit', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ rateLimitPerMinute: 5 });
  });
  afterAll(() => app.stop());

  test('when a key makes requests, then every response carries the limit, the remainder and Retry-After', async () => {
    const t = await app.tenant();

    const first = await t.api.get('/ping');
    const notFound = await t.api.get('/clients/999999');

    expect(first.headers.get('x-ratelimit-limit')).toBe('5');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('4');
    expect(Number(first.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(first.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(notFound.headers.get('x-ratelimit-remaining')).toBe('3');
  });

  test('when a key goes over its limit, then 429 rate_limited with Remaining 0 and Retry-After', async () => {
    const t = await app.tenant();
    for (let i = 0; i < 5; i += 1) expect((await t.api.get('/ping')).status).toBe(200);

    const limited = await t.api.get('/ping');

    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: 'rate_limited', message: expect.any(String) });
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(limited.headers.get('x-ratelimit-limit')).toBe('5');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  test('when one key is limited, then another key from the same address is not', async () => {
    const busy = await app.tenant();
    const calm = await app.tenant({ businessId: busy.businessId });
    for (let i = 0; i < 6; i += 1) await busy.api.get('/ping');

    const res = await calm.api.get('/ping');

    expect(res.status).toBe(200);
  });
});

const redisUrl = process.env.TEST_REDIS_URL;

(redisUrl ? describe : describe.skip)('shared rate limit in Redis', () => {
  test('when two server processes share REDIS_URL, then one key has one counter across both', async () => {
    const redisPrefix = `invoicing-test:${randomBytes(6).toString('hex')}:`;
    const settings = { rateLimitPerMinute: 4, redisUrl, redisPrefix };
    const one = await startApp(settings);
    const tenant = await one.tenant();
    const two = await startApp(settings, { keepDatabase: { url: one.databaseUrl, drop: () => Promise.resolve() } });

    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) {
      const server = i % 2 === 0 ? one : two;
      statuses.push((await server.api(tenant.key).get('/ping')).status);
    }

    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    await two.stop();
    await one.stop();
  });
});

(redisUrl ? describe : describe.skip)('when Redis is cut off mid-run (through a TCP proxy, never by stopping it)', () => {
  test('then requests are still served and counted in memory with their headers, the log says so once, and counting returns to Redis', async () => {
    // Arrange
    const target = new URL(redisUrl!);
    const proxy = await startTcpProxy(target.hostname, Number(target.port || 6379));
    const lines: { msg: string }[] = [];
    const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _encoding, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
    const redisPrefix = `invoicing-test:${randomBytes(6).toString('hex')}:`;
    const app = await startApp({ rateLimitPerMinute: 3, redisUrl: `redis://127.0.0.1:${proxy.port}`, redisPrefix }, { logger });
    const tenant = await app.tenant();
    const counted = await tenant.api.get('/ping');

    // Act: Redis unreachable
    proxy.cut();
    const during = [];
    for (let i = 0; i < 4; i += 1) during.push(await tenant.api.get('/ping'));

    // Assert
    expect(counted.headers.get('x-ratelimit-remaining')).toBe('2');
    expect(during.map((res) => res.status)).toEqual([200, 200, 200, 429]);
    expect(during.map((res) => res.headers.get('x-ratelimit-remaining'))).toEqual(['2', '1', '0', '0']);
    expect(lines.filter((line) => line.msg.startsWith('redis unreachable'))).toHaveLength(1);

    // Act: Redis back; the shared counter (1 request) takes over again
    proxy.restore();
    await eventually(async () => {
      await tenant.api.get('/ping');
      return lines.some((line) => line.msg.startsWith('redis answers again'));
    });

    expect(lines.filter((line) => line.msg.startsWith('redis unreachable'))).toHaveLength(1);
    await app.stop();
    await proxy.stop();
  });
});

(redisUrl ? describe : describe.skip)('when Redis answers too late as the server starts (a busy machine)', () => {
  test('then the server counts in memory at first, and in Redis, shared with the other servers, once it answers', async () => {
    // Arrange: the rate-limit scripts, loaded as the server starts, answered after the 1 s command timeout
    const target = new URL(redisUrl!);
    const proxy = await startTcpProxy(target.hostname, Number(target.port || 6379));
    proxy.holdOnce('SCRIPT', 1_500);
    const lines: { msg: string }[] = [];
    const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _encoding, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
    const settings = { rateLimitPerMinute: 5, redisPrefix: `invoicing-test:${randomBytes(6).toString('hex')}:` };
    const late = await startApp({ ...settings, redisUrl: `redis://127.0.0.1:${proxy.port}` }, { logger });
    const tenant = await late.tenant();
    const prompt = await startApp({ ...settings, redisUrl }, { keepDatabase: { url: late.databaseUrl, drop: () => Promise.resolve() } });

    // Act
    await eventually(async () => {
      await late.api(tenant.key).get('/ping');
      return lines.some((line) => line.msg.startsWith('redis answers again'));
    });
    const shared = [await late.api(tenant.key).get('/ping'), await prompt.api(tenant.key).get('/ping'), await late.api(tenant.key).get('/ping')];

    // Assert: one counter for both servers, the late one's requests before it answered not in it
    const remaining = shared.map((res) => Number(res.headers.get('x-ratelimit-remaining')));
    expect(remaining).toEqual([remaining[0], remaining[0] - 1, remaining[0] - 2]);
    await prompt.stop();
    await late.stop();
    await proxy.stop();
  });
});

describe('when REDIS_URL points at no server', () => {
  test('then the server refuses to start, saying why', async () => {
    const start = startApp({ redisUrl: 'redis://127.0.0.1:1', redisPrefix: 'unreachable:' });

    await expect(start).rejects.toThrow(/REDIS_URL/);
  });
});
