import { spawn } from 'node:child_process';
import path from 'node:path';
import { Database } from '../../server/db/database';
import { pendingMigrations } from '../../server/db/migrate';
import { TEST_APP_SECRET_KEY } from '../support/app';
import { scratchDatabase, testDriver } from '../support/database';
import { eventually } from '../support/eventually';

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

  test('when `npm start` is stopped with SIGTERM, then the server stops with it and no process is left answering', async () => {
    if (testDriver() !== 'sqlite') return; // the embedded database is what `npm start` runs on by default
    const scratch = await scratchDatabase();
    const npm = spawn('npm', ['start', '--silent'], {
      cwd: path.resolve(__dirname, '../..'),
      env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: scratch.url, LOG_LEVEL: 'silent', PORT: '0', APP_SECRET_KEY: TEST_APP_SECRET_KEY },
    });
    const url = await new Promise<string>((resolve, reject) => {
      npm.stdout.on('data', (d: Buffer) => {
        const match = String(d).match(/(http:\/\/localhost:\d+)\//);
        if (match) resolve(match[1]);
      });
      npm.on('exit', (code) => reject(new Error(`npm start exited with ${code}`)));
    });
    expect((await fetch(`${url}/api/v1/partner`)).status).toBe(200);

    npm.kill('SIGTERM');
    await new Promise((resolve) => npm.once('exit', resolve));

    await eventually(async () => (await fetch(`${url}/api/v1/partner`).then(() => 'answers', () => 'gone')) === 'gone', 10_000);
    await scratch.drop();
  });
});
