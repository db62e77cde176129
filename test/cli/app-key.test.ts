import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startApp } from '../support/app';
import { requireBuild, runCli } from '../support/cli';
import { testDriver } from '../support/database';

const SECRET = 'whsec_0123456789abcdef';
/** The embedded database is what generates key files; MySQL requires APP_SECRET_KEY. */
const embeddedOnly = testDriver() === 'sqlite' ? test : test.skip;

beforeAll(requireBuild);

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'app-key-cli-'));
  for (const sub of ['a', 'b', 'db']) fs.mkdirSync(path.join(dir, sub));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A CLI run on the embedded database under `dir/db`, from `dir/<from>`; `env` may set APP_SECRET_KEY (unset by default). */
async function embedded(from: string, args: string[], env: Record<string, string | undefined> = {}) {
  return runCli(`sqlite:${path.join(dir, 'db', 'invoicing.sqlite3')}`, [...args, '--json'], { APP_SECRET_KEY: undefined, ...env }, 20_000, path.join(dir, from));
}

/** A business and a key whose webhook secret is sealed, created from `dir/<from>`. */
async function keyWithSecret(from: string, env: Record<string, string | undefined> = {}): Promise<number> {
  const business = JSON.parse((await embedded(from, ['business', 'create', '--name', 'Keys Co', '--currency', 'USD'], env)).stdout);
  const created = await embedded(from, ['keys', 'create', '--business', String(business.id), '--mode', 'test', '--scopes', 'all', '--webhook-url', 'https://hooks.example.com/in', '--webhook-secret', SECRET], env);
  expect(created.code).toBe(0);
  return JSON.parse(created.stdout).id;
}

/** Rotation opens the stored secret and prints it back. */
async function openedSecret(from: string, keyId: number, env: Record<string, string | undefined> = {}): Promise<string | undefined> {
  const rotated = await embedded(from, ['keys', 'rotate', String(keyId), '--expire-now', '--yes'], env);
  return rotated.code === 0 ? JSON.parse(rotated.stdout).webhook_secret : rotated.stderr;
}

describe('the application key', () => {
  embeddedOnly('when the embedded database is used from another working directory, then its stored webhook secret still opens', async () => {
    const keyId = await keyWithSecret('a');

    expect(await openedSecret('b', keyId)).toBe(SECRET);
    expect(fs.existsSync(path.join(dir, 'db', 'app-secret.key'))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'a', 'data'))).toBe(false);
  });

  embeddedOnly('when a key is in ./data/app-secret.key from an earlier version, then it keeps opening the secrets sealed with it, from any directory', async () => {
    const legacy = randomBytes(32).toString('base64');
    const keyId = await keyWithSecret('b', { APP_SECRET_KEY: legacy });
    fs.mkdirSync(path.join(dir, 'a', 'data'));
    fs.writeFileSync(path.join(dir, 'a', 'data', 'app-secret.key'), `${legacy}\n`, { mode: 0o600 });

    const fromLegacyDirectory = await openedSecret('a', keyId);
    const rotatedAgain = JSON.parse((await embedded('b', ['keys', 'list', '--business', '1'])).stdout).find((k: { status: string }) => k.status === 'active');
    const fromElsewhere = await openedSecret('b', rotatedAgain.id);

    expect(fromLegacyDirectory).toBe(SECRET);
    expect(fromElsewhere).toBe(SECRET);
  });

  test.each([[['keys', 'list', '--business', '1']], [['serve', '--port', '0']], [['migrate']]])(
    'when the database is MySQL and APP_SECRET_KEY is unset, then %j is refused in one line saying how to make a key',
    async (args) => {
      const res = await runCli('mysql://root@127.0.0.1:3306/no_such_database', args, { APP_SECRET_KEY: undefined }, 20_000);

      expect(res.code).toBe(1);
      expect(res.stderr).toMatch(/^error: [^\n]*APP_SECRET_KEY is required[^\n]*openssl rand -base64 32[^\n]*\n$/);
    },
  );

  test('when stored secrets were sealed under another key, then serve refuses to start and other commands warn, naming APP_SECRET_KEY', async () => {
    const app = await startApp();
    try {
      const t = await app.tenant({ webhookUrl: 'https://hooks.example.com/in', webhookSecret: SECRET });
      const otherKey = { APP_SECRET_KEY: randomBytes(32).toString('base64'), LOG_LEVEL: 'silent' };

      const served = await runCli(app.databaseUrl, ['serve', '--port', '0'], otherKey, 10_000);
      const listed = await runCli(app.databaseUrl, ['keys', 'list', '--business', String(t.businessId), '--json'], otherKey, 20_000);

      expect(served.code).toBe(1);
      expect(served.stderr).toMatch(/^error: [^\n]*cannot be opened[^\n]*APP_SECRET_KEY[^\n]*\n$/);
      expect(listed.code).toBe(0);
      expect(listed.stderr).toMatch(/^warning: [^\n]*cannot be opened[^\n]*APP_SECRET_KEY[^\n]*\n$/);
    } finally {
      await app.stop();
    }
  });
});
