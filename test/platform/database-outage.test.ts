/**
 * The database cut off mid-run (through a TCP proxy the test controls, never by stopping the
 * shared MariaDB): requests fail with the contract's 503 `service_unavailable` while it is down,
 * write nothing, and the server recovers by itself when it is back. MariaDB only: SQLite is a file.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { aClient, startApp, Tenant, TestApp } from '../support/app';
import { scratchDatabase, ScratchDatabase, testDriver } from '../support/database';
import { eventually } from '../support/eventually';
import { startTcpProxy, TcpProxy } from '../support/tcp-proxy';

const onMysql = testDriver() === 'mysql' ? describe : describe.skip;

onMysql('when the database is cut off', () => {
  let scratch: ScratchDatabase;
  let proxy: TcpProxy;
  let app: TestApp;
  let t: Tenant;
  const logLines: { msg: string; database?: string; err?: unknown }[] = [];
  const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _encoding, done) => (logLines.push(JSON.parse(String(chunk))), done()) }));

  beforeAll(async () => {
    scratch = await scratchDatabase({ migrated: true });
    const direct = new URL(scratch.url);
    proxy = await startTcpProxy(direct.hostname, Number(direct.port || 3306));
    const proxied = new URL(scratch.url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    app = await startApp({ databaseUrl: proxied.toString() }, { keepDatabase: scratch, logger });
    t = await app.tenant();
  });
  afterAll(async () => {
    proxy?.restore();
    await app?.stop();
    await proxy?.stop();
    await scratch?.drop();
  });

  test('then reads and writes answer 503 service_unavailable, quickly, nothing is written, and the server recovers by itself', async () => {
    // Arrange
    const before = (await t.api.get('/clients')).body.meta.total;

    // Act: cut
    proxy.cut();
    const started = Date.now();
    const read = await t.api.get('/clients');
    const write = await t.api.post('/clients', aClient({ name: 'Lost in the outage' }));
    const elapsed = Date.now() - started;
    for (let i = 0; i < 5; i += 1) await t.api.get('/clients');

    // Assert: down
    expect(read.status).toBe(503);
    expect(read.body).toEqual({ error: 'service_unavailable', message: expect.stringContaining('retry later') });
    expect(write.status).toBe(503);
    expect(elapsed).toBeLessThan(15_000);
    const problems = logLines.filter((line) => line.msg.startsWith('database connection problem'));
    expect(problems.length).toBeGreaterThan(0);
    expect(new Set(problems.map((line) => line.database)).size).toBe(problems.length);
    expect(JSON.stringify(problems)).not.toMatch(/\n\s+at /);

    // Act: back
    proxy.restore();

    // Assert: recovered, and the write during the outage left nothing
    await eventually(async () => (await t.api.get('/clients')).status === 200);
    expect((await t.api.get('/clients')).body.meta.total).toBe(before);
    expect((await t.api.post('/clients', aClient())).status).toBe(201);
  });
});
