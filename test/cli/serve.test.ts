import { spawn } from 'node:child_process';
import path from 'node:path';
import { Database } from '../../server/db/database';
import { pendingMigrations } from '../../server/db/migrate';
import { TEST_APP_SECRET_KEY } from '../support/app';
import { scratchDatabase, testDriver } from '../support/database';

const BIN = path.resolve(__dirname, '../../dist/bin/invoicing.js');

/** Starts `invoicing serve --port 0` and resolves with its URL, or with its exit code if it stops first. */
function serve(databaseUrl: string) {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], {
    env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', APP_SECRET_KEY: TEST_APP_SECRET_KEY },
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const started = new Promise<{ url?: string; code?: number | null; stderr: string }>((resolve) => {
    child.stdout.on('data', (d: Buffer) => {
      const match = String(d).match(/(http:\/\/localhost:\d+)\//);
      if (match) resolve({ url: match[1], stderr });
    });
    child.on('exit', (code) => resolve({ code, stderr }));
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { child, started, exited };
}

describe('invoicing serve', () => {
  test('when started on an empty database, then it migrates an embedded one itself or refuses a MySQL one', async () => {
    const scratch = await scratchDatabase();
    const { child, started, exited } = serve(scratch.url);

    const outcome = await started;

    if (testDriver() === 'sqlite') {
      expect(outcome.url).toBeDefined();
      const ping = await fetch(`${outcome.url}/api/v1/partner/ping`);
      expect(ping.status).toBe(401);
      const db = Database.open(scratch.url);
      expect(await pendingMigrations(db.knex)).toEqual([]);
      await db.close();
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } else {
      expect(outcome.code).toBe(1);
      expect(outcome.stderr).toMatch(/invoicing migrate/);
    }
    await scratch.drop();
  });
});
