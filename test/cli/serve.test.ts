import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { Database } from '../../server/db/database';
import { pendingMigrations } from '../../server/db/migrate';
import { TEST_APP_SECRET_KEY } from '../support/app';
import { ScratchDatabase, scratchDatabase, testDriver } from '../support/database';
import { eventually } from '../support/eventually';
import { freePort } from '../support/net';

const BIN = path.resolve(__dirname, '../../dist/bin/invoicing.js');

/**
 * Starts `invoicing serve --port 0` (and `args`) and resolves with the address it announces, or
 * with its exit code if it stops first.
 */
function serve(databaseUrl: string, args: string[] = [], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], {
    env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', APP_SECRET_KEY: TEST_APP_SECRET_KEY, ...env },
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const started = new Promise<{ url?: string; port?: number; code?: number | null; stderr: string }>((resolve) => {
    child.stdout.on('data', (d: Buffer) => {
      const match = String(d).match(/(http:\/\/(?:[^/:]+|\[[^\]]+\]):(\d+))\//);
      if (match) resolve({ url: match[1], port: Number(match[2]), stderr });
    });
    child.on('exit', (code) => resolve({ code, stderr }));
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { child, started, exited };
}

/** An IPv4 address of this machine other than loopback, if it has one. */
function otherLocalAddress(): string | undefined {
  return Object.values(os.networkInterfaces())
    .flat()
    .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address;
}

/** 'answers' when the partner API answers at `url`, else what the connection met. */
async function reach(url: string): Promise<string> {
  return fetch(`${url}/api/v1/partner`).then(
    () => 'answers',
    (err: { cause?: { code?: string } }) => err.cause?.code ?? 'failed',
  );
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

describe('invoicing serve --host and HOST', () => {
  let scratch: ScratchDatabase;
  beforeAll(async () => {
    scratch = await scratchDatabase({ migrated: true });
  });
  afterAll(() => scratch.drop());

  test('when --host 127.0.0.1 is given, then it announces that address and answers there only, not on another address of this machine', async () => {
    // Arrange
    const { child, started, exited } = serve(scratch.url, ['--host', '127.0.0.1']);

    // Act
    const outcome = await started;

    // Assert
    expect(outcome.url).toBe(`http://127.0.0.1:${outcome.port}`);
    expect(await reach(outcome.url!)).toBe('answers');
    const other = otherLocalAddress();
    if (other) expect(await reach(`http://${other}:${outcome.port}`)).toBe('ECONNREFUSED');
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  test('when neither is set, then it listens on every interface as before and announces localhost', async () => {
    const { child, started, exited } = serve(scratch.url);

    const outcome = await started;

    expect(outcome.url).toBe(`http://localhost:${outcome.port}`);
    expect(await reach(`http://127.0.0.1:${outcome.port}`)).toBe('answers');
    const other = otherLocalAddress();
    if (other) expect(await reach(`http://${other}:${outcome.port}`)).toBe('answers');
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  test('when --port is given and BASE_URL is not set, then the links the API gives follow that port', async () => {
    const port = await freePort();
    const { child, started, exited } = serve(scratch.url, ['--port', String(port)]);

    const outcome = await started;
    const index = (await (await fetch(`http://127.0.0.1:${port}/api/v1/partner`)).json()) as { ping: string };

    expect(outcome.port).toBe(port);
    expect(index.ping).toBe(`http://localhost:${port}/api/v1/partner/ping`);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  test('when HOST is set, then it listens there; --host overrides it', async () => {
    const fromEnv = serve(scratch.url, [], { HOST: '127.0.0.1' });
    const overridden = serve(scratch.url, ['--host', 'localhost'], { HOST: '0.0.0.0' });

    const [env, flag] = await Promise.all([fromEnv.started, overridden.started]);

    expect(env.url).toBe(`http://127.0.0.1:${env.port}`);
    expect(flag.url).toBe(`http://localhost:${flag.port}`);
    expect(await reach(flag.url!)).toBe('answers');
    const other = otherLocalAddress();
    if (other) expect(await reach(`http://${other}:${env.port}`)).toBe('ECONNREFUSED');
    fromEnv.child.kill('SIGTERM');
    overridden.child.kill('SIGTERM');
    expect(await Promise.all([fromEnv.exited, overridden.exited])).toEqual([0, 0]);
  });

  test.each([['not a host'], ['http://127.0.0.1'], ['300.1.2.3']])('when --host is %j, then it exits 2 naming what was typed', async (host) => {
    const { started } = serve(scratch.url, ['--host', host]);

    const outcome = await started;

    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toBe(`error: --host must be an IP address or a host name, e.g. 127.0.0.1, not "${host}"\n`);
  });

  test('when HOST is not a host, then it refuses to start naming HOST and its value', async () => {
    const { started } = serve(scratch.url, [], { HOST: 'my host' });

    const outcome = await started;

    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain('"HOST" must be an IP address or a host name, e.g. 127.0.0.1, not "my host"');
  });

  test('when --host is an address this machine does not have, then it exits 1 saying so', async () => {
    const { started } = serve(scratch.url, ['--host', '192.0.2.123']);

    const outcome = await started;

    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toBe('error: cannot listen on 192.0.2.123:0: 192.0.2.123 is not an address of this machine (see HOST and --host)\n');
  });
});
