/**
 * The embedded SQLite file shared by the server and CLI processes: writers wait their turn (every
 * write transaction takes the write lock when it begins, and waits for it up to the busy timeout),
 * so concurrent API writes and `invoicing keys create` in other processes all succeed; a lock that
 * still cannot be had is a 503 `service_unavailable` with Retry-After, never a 500. SQLite only.
 */
import BetterSqlite3 from 'better-sqlite3';
import { aClient, anInvoice, startApp, Tenant, TestApp } from '../support/app';
import { requireBuild, runBinary, runCli } from '../support/cli';
import { testDriver } from '../support/database';
import { sqliteFilename } from '../../server/db/connection';

const onSqlite = testDriver() === 'sqlite' ? describe : describe.skip;

onSqlite('several writers on one SQLite file', () => {
  let app: TestApp;
  let t: Tenant;

  beforeAll(async () => {
    requireBuild();
    app = await startApp({ rateLimitPerMinute: 100_000 });
    t = await app.tenant();
  });
  afterAll(() => app?.stop());

  test('API writers and CLI `keys create` processes at once: every write succeeds, none answers 500', async () => {
    // Arrange
    const clientIds: number[] = [];
    for (let i = 0; i < 8; i += 1) clientIds.push((await t.api.post('/clients', aClient())).body.client.id);
    let writing = true;

    // Act: 8 API clients create invoices while CLI processes create keys, two at a time
    const apiWriters = clientIds.map(async (clientId) => {
      const statuses: number[] = [];
      while (writing || statuses.length < 5) statuses.push((await t.api.post('/invoices', anInvoice(clientId))).status);
      return statuses;
    });
    const cliRuns = [];
    for (let round = 0; round < 3; round += 1) {
      const pair = await Promise.all(
        [0, 1].map(() => runBinary(app.databaseUrl, ['keys', 'create', '--business', String(t.businessId), '--mode', 'test', '--scopes', 'all', '--json'], {}, 60_000)),
      );
      cliRuns.push(...pair);
    }
    writing = false;
    const statuses = (await Promise.all(apiWriters)).flat();

    // Assert
    expect(cliRuns.map((r) => ({ code: r.code, stderr: r.stderr }))).toEqual(cliRuns.map(() => ({ code: 0, stderr: '' })));
    expect(statuses.filter((s) => s !== 201)).toEqual([]);
    expect(statuses.length).toBeGreaterThanOrEqual(40);
  }, 180_000);

  describe('when another connection holds the write lock longer than the busy timeout', () => {
    let locked: TestApp;
    let holder: BetterSqlite3.Database;

    beforeAll(async () => {
      locked = await startApp({ databaseBusyTimeoutMs: 300 });
      holder = new BetterSqlite3(sqliteFilename(locked.databaseUrl));
    });
    afterAll(async () => {
      if (holder?.inTransaction) holder.exec('ROLLBACK');
      holder?.close();
      await locked?.stop();
    });

    test('an API write answers 503 service_unavailable with Retry-After, and succeeds once the lock is free', async () => {
      // Arrange
      const tenant = await locked.tenant();
      holder.exec('BEGIN IMMEDIATE');

      // Act
      const refused = await tenant.api.post('/clients', aClient());
      holder.exec('ROLLBACK');
      const accepted = await tenant.api.post('/clients', aClient());

      // Assert
      expect(refused.status).toBe(503);
      expect(refused.body).toEqual({ error: 'service_unavailable', message: expect.stringContaining('busy') });
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(accepted.status).toBe(201);
    });

    test('the CLI prints one clear line, without SQL, and exits 1', async () => {
      // Arrange
      const tenant = await locked.tenant();
      holder.exec('BEGIN IMMEDIATE');

      // Act
      const result = await runCli(locked.databaseUrl, ['keys', 'create', '--business', String(tenant.businessId), '--mode', 'test', '--scopes', 'all'], {
        DATABASE_BUSY_TIMEOUT_MS: '300',
      });
      holder.exec('ROLLBACK');

      // Assert
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^error: the database is busy with other writers/);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).not.toMatch(/insert|select|update|SQLITE_/i);
    });
  });
});
