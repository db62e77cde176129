import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { migrations } from '../../migrations';
import { Database } from '../../server/db/database';
import { pendingMigrations } from '../../server/db/migrate';
import { startApp, TestApp } from '../support/app';
import { requireBuild, runCli, CliResult } from '../support/cli';
import { scratchDatabase } from '../support/database';
import { hasScript, KEYS, plain, Terminal } from '../support/terminal';

// Asynchronous on purpose: a synchronous child would block the event loop that serves the in-process app.
const execFileAsync = promisify(execFile);

let app: TestApp;

beforeAll(async () => {
  requireBuild();
  app = await startApp();
});
afterAll(() => app.stop());

function init(args: string[], env: Record<string, string> = {}, databaseUrl = app.databaseUrl): Promise<CliResult> {
  return runCli(databaseUrl, ['init', ...args], env, 20_000);
}

let counter = 0;
/** A business name no other test uses, so its row can be looked for. */
function uniqueName(): string {
  counter += 1;
  return `Init Shop ${counter} ${Date.now()}`;
}

async function businessesNamed(name: string): Promise<number> {
  const [{ n }] = await app.db.knex('businesses').where({ name }).count({ n: '*' });
  return Number(n);
}

function curlLine(stdout: string): string {
  const line = stdout.split('\n').map((l) => l.trim()).find((l) => l.startsWith('curl '));
  if (!line) throw new Error(`no curl line in:\n${stdout}`);
  return line;
}

describe('invoicing init with flags', () => {
  test('when every flag is given with --json, then it prints the business, the test key and a ping call that work against the API', async () => {
    // Arrange
    const name = uniqueName();

    // Act
    const res = await init(['--name', name, '--currency', 'eur', '--country', 'fr', '--scopes', 'clients:read,invoices:write', '--json'], {
      BASE_URL: app.url,
    });

    // Assert
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout);
    expect(out).toEqual({
      business: { id: expect.any(Number), name, currency: 'EUR', country: 'FR', plan: 'free' },
      key: {
        id: expect.any(Number),
        key: expect.stringMatching(/^svc_test_[0-9A-Za-z]{32,}$/),
        business_id: out.business.id,
        mode: 'test',
        scopes: ['clients:read', 'invoices:write'],
        webhook_url: null,
      },
      migrations_applied: [],
      ping: { url: `${app.url}/api/v1/partner/ping`, curl: expect.any(String) },
    });
    expect(out.ping.curl).toContain(out.key.key);
    expect(out.ping.curl).toContain('/api/v1/partner/ping');
    const ping = await app.api(out.key.key).get('/ping');
    expect(ping.status).toBe(200);
    expect(ping.body).toMatchObject({ business: { id: out.business.id }, scopes: ['clients:read', 'invoices:write'], livemode: false });
  });

  test('when the printed curl command is run, then the API answers it for the new business', async () => {
    // Arrange
    const res = await init(['--name', uniqueName(), '--currency', 'USD', '--scopes', 'all'], { BASE_URL: app.url });
    const line = curlLine(res.stdout);

    // Act: the line exactly as printed, through a shell, as a person pasting it would run it.
    const { stdout } = await execFileAsync('sh', ['-c', line], { timeout: 10_000 });

    // Assert
    expect(res.code).toBe(0);
    expect(line).toContain(`${app.url}/api/v1/partner/ping`);
    expect(res.stdout).toContain(`The API is running at ${app.url}/api/v1/partner`);
    expect(res.stdout).not.toMatch(/Start the API/);
    const ping = JSON.parse(stdout);
    expect(ping.livemode).toBe(false);
    expect(ping.scopes).toHaveLength(10);
    expect(res.stdout).toContain(`Created business ${ping.business.id}:`);
  });

  test('when a webhook URL is given without a secret, then a whsec_ secret is generated, printed and signs the deliveries', async () => {
    // Act
    const res = await init(['--name', uniqueName(), '--currency', 'USD', '--scopes', 'all', '--webhook-url', 'http://127.0.0.1:9/hook', '--json'], {
      WEBHOOK_ALLOW_PRIVATE: 'true',
    });

    // Assert
    expect(res.code).toBe(0);
    const { key } = JSON.parse(res.stdout);
    expect(key.webhook_url).toBe('http://127.0.0.1:9/hook');
    expect(key.webhook_secret).toMatch(/^whsec_[0-9A-Za-z]{32}$/);
    expect(await app.server.services.keys.webhookSecret(key.id)).toBe(key.webhook_secret);
  });
});

describe('invoicing init on a brand-new database', () => {
  test('when no server answers at the base URL, then init says how to start it, and its port', async () => {
    const res = await init(['--name', uniqueName(), '--currency', 'USD', '--scopes', 'all'], { BASE_URL: 'http://127.0.0.1:9', PORT: '9' });

    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/Start the API with: npm start .*port 9\)/);
    expect(curlLine(res.stdout)).toContain('http://127.0.0.1:9/api/v1/partner/ping');
  });

  test('when the database is empty, then init applies every migration and the key it prints works', async () => {
    // Arrange: a new SQLite file in a temp dir (or a new, empty MySQL database on the mysql project).
    const scratch = await scratchDatabase();
    try {
      // Act
      const res = await init(['--name', 'Fresh Start', '--currency', 'USD', '--scopes', 'all', '--json'], {}, scratch.url);

      // Assert
      expect(res.code).toBe(0);
      const out = JSON.parse(res.stdout);
      expect(out.migrations_applied).toEqual(migrations.map((m) => m.name));
      const db = Database.open(scratch.url, { quiet: true });
      try {
        expect(await pendingMigrations(db.knex)).toEqual([]);
        expect(await db.knex.schema.hasTable('invoices')).toBe(true);
        expect(await db.knex('api_keys').where({ id: out.key.id }).first()).toMatchObject({ business_id: out.business.id, last4: out.key.key.slice(-4) });
      } finally {
        await db.close();
      }
      const fresh = await startApp({}, { keepDatabase: scratch });
      try {
        expect((await fresh.api(out.key.key).get('/ping')).body.business).toEqual({ id: out.business.id, name: 'Fresh Start', currency: 'USD' });
      } finally {
        await fresh.stop();
      }
    } finally {
      await scratch.drop();
    }
  });
});

describe('invoicing init and the business there is', () => {
  test('when the database has one business, as listen and trigger leave it, then init keys that business rather than make another', async () => {
    // Arrange: the business `webhooks listen` makes on a fresh install.
    const scratch = await scratchDatabase({ migrated: true });
    try {
      const made = JSON.parse((await runCli(scratch.url, ['business', 'create', '--name', 'My business', '--currency', 'USD', '--json'])).stdout);

      // Act
      const res = await init(['--scopes', 'all'], {}, scratch.url);

      // Assert
      expect(res.code).toBe(0);
      expect(res.stdout).toContain(`Using business ${made.id}: My business (USD, plan free)`);
      expect(res.stdout).toContain(`invoicing webhooks listen --business ${made.id} --forward-to`);
      const db = Database.open(scratch.url, { quiet: true });
      try {
        expect(await db.knex('businesses').count({ n: '*' })).toEqual([{ n: 1 }]);
        expect(await db.knex('api_keys').where({ business_id: made.id }).count({ n: '*' })).toEqual([{ n: 1 }]);
      } finally {
        await db.close();
      }
    } finally {
      await scratch.drop();
    }
  });

  test('when --business names a business that exists, then the test key is made for it and no business is made', async () => {
    const name = uniqueName();
    const made = JSON.parse((await runCli(app.databaseUrl, ['business', 'create', '--name', name, '--currency', 'EUR', '--json'])).stdout);

    const res = await init(['--business', String(made.id), '--scopes', 'invoices:read', '--json']);

    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout);
    expect(out.business).toMatchObject({ id: made.id, name, currency: 'EUR' });
    expect(out.key).toMatchObject({ business_id: made.id, mode: 'test', scopes: ['invoices:read'] });
    expect(await businessesNamed(name)).toBe(1);
  });

  test('when --business is given with --name, then it is a usage error and nothing is made', async () => {
    const res = await init(['--business', '1', '--name', 'Other', '--scopes', 'all']);

    expect(res.code).toBe(2);
    expect(res.stderr).toBe('error: --business keys a business that exists: give it without --name, --currency and --country\n');
  });
});

describe('invoicing init refusals', () => {
  test('when the currency is not ISO 4217, then it exits 2 with the reason and creates no business', async () => {
    const name = uniqueName();

    const res = await init(['--name', name, '--currency', 'ABC', '--scopes', 'all']);

    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--currency "ABC": must be an ISO 4217 code/);
    expect(await businessesNamed(name)).toBe(0);
  });

  test('when a scope name is unknown, then it exits 2 naming it', async () => {
    const name = uniqueName();

    const res = await init(['--name', name, '--currency', 'USD', '--scopes', 'clients:read,root']);

    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--scopes: unknown scope\(s\) root/);
    expect(await businessesNamed(name)).toBe(0);
  });

  test('when the webhook URL is private and private URLs are not allowed, then it exits 2 and leaves no business behind', async () => {
    const name = uniqueName();
    const keysBefore = await app.db.knex('api_keys').count({ n: '*' });

    const res = await init(['--name', name, '--currency', 'USD', '--scopes', 'all', '--webhook-url', 'http://10.0.0.8/hook']);

    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--webhook-url "http:\/\/10\.0\.0\.8\/hook": .*private/);
    expect(await businessesNamed(name)).toBe(0);
    expect(await app.db.knex('api_keys').count({ n: '*' })).toEqual(keysBefore);
  });

  test('when required flags are missing and there is no terminal, then it exits 2 naming every one of them', async () => {
    const res = await init(['--country', 'US']);

    expect(res.code).toBe(2);
    expect(res.stderr.trim()).toBe('error: missing required options: --name, --currency, --scopes');
  });

  test.each([
    ['a database that is down', 'mysql://root@127.0.0.1:3399/x', /connection refused/],
    ['a DATABASE_URL of an unsupported kind', 'postgres://u:secret@h/x', /DATABASE_URL/],
  ])('when given %s, then it exits 1 with one line, no stack trace and no password', async (_case, databaseUrl, reason) => {
    const res = await init(['--name', 'X', '--currency', 'USD', '--scopes', 'all'], {}, databaseUrl);

    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(reason);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).not.toMatch(/\n\s+at /);
    expect(res.stderr).not.toContain('secret');
    expect(res.stdout).toBe('');
  });
});

(hasScript ? describe : describe.skip)('invoicing init on a terminal', () => {
  test('when a person answers the questions, then the key on the screen works with exactly the scopes picked', async () => {
    // Arrange
    const t = new Terminal(app.databaseUrl, ['init'], { BASE_URL: app.url });

    // Act: "A new business" is the last of the list, one up from the first.
    await t.answer(/Business to make the test key for/, KEYS.up, KEYS.enter);
    await t.answer(/Business name/, 'Terminal Studio', KEYS.enter);
    await t.answer(/Currency/, 'jpy', KEYS.enter);
    await t.answer(/Country/, 'jp', KEYS.enter);
    // The first two of the list: invoices:read and invoices:write.
    await t.answer(/scopes/i, KEYS.space, KEYS.down, KEYS.space, KEYS.enter);
    await t.answer(/Webhook URL/, KEYS.enter);
    const code = await t.exitCode();

    // Assert
    const screen = plain(t.screen);
    expect(code).toBe(0);
    expect(screen).not.toMatch(/signing secret/i);
    const key = /Key, shown only this once: (svc_test_[0-9A-Za-z]+)/.exec(screen)?.[1];
    expect(key).toBeDefined();
    expect(screen).toContain(`curl -H "Authorization: Bearer ${key}" ${app.url}/api/v1/partner/ping`);
    const ping = await app.api(key).get('/ping');
    expect(ping.status).toBe(200);
    expect(ping.body.scopes).toEqual(['invoices:read', 'invoices:write']);
    expect(ping.body.business).toMatchObject({ name: 'Terminal Studio', currency: 'JPY' });
  });

  test('when an answer is wrong, then it is refused as it is typed and asked again, and the corrected answers are kept', async () => {
    // Arrange
    const name = uniqueName();
    const t = new Terminal(app.databaseUrl, ['init', '--name', name, '--scopes', 'all'], { BASE_URL: app.url });

    // Act
    await t.answer(/Currency/, 'dollars', KEYS.enter);
    await t.waitFor(/must be an ISO 4217 code such as USD/);
    await t.answer(/Currency/, KEYS.ctrlU, 'usd', KEYS.enter);
    await t.answer(/Country/, 'USA', KEYS.enter);
    await t.waitFor(/must be an ISO 3166-1 alpha-2 code such as US/);
    await t.answer(/Country/, KEYS.ctrlU, 'us', KEYS.enter);
    await t.answer(/Webhook URL/, KEYS.enter);
    const code = await t.exitCode();

    // Assert
    expect(code).toBe(0);
    expect(plain(t.screen)).toMatch(new RegExp(`Created business \\d+: ${name} \\(USD, US, plan free\\)`));
  });

  test('when the webhook URL typed is private and private URLs are not allowed, then it is refused as it is typed', async () => {
    const name = uniqueName();
    const t = new Terminal(app.databaseUrl, ['init', '--name', name, '--currency', 'USD', '--country', 'US', '--scopes', 'all']);

    await t.answer(/Webhook URL/, 'http://10.0.0.8/hook', KEYS.enter);
    await t.waitFor(/points to a private, loopback or link-local address/);
    await t.answer(/Webhook URL/, KEYS.ctrlU, KEYS.enter);
    const code = await t.exitCode();

    expect(code).toBe(0);
    expect(plain(t.screen)).not.toMatch(/signing secret/i);
    expect(await businessesNamed(name)).toBe(1);
  });

  test('when the person presses Ctrl-C at a question, then it exits 130 saying nothing more was done, and no business is made', async () => {
    const name = uniqueName();
    const t = new Terminal(app.databaseUrl, ['init', '--name', name, '--scopes', 'all']);

    await t.answer(/Currency/, KEYS.ctrlC);
    const code = await t.exitCode();

    expect(code).toBe(130);
    expect(plain(t.screen)).toContain('interrupted: nothing more was done');
    expect(await businessesNamed(name)).toBe(0);
  });

  test('when a webhook URL is given and the secret left empty, then a generated secret is printed', async () => {
    // Arrange
    const t = new Terminal(app.databaseUrl, ['init', '--name', 'Hooked', '--currency', 'USD', '--scopes', 'all'], { WEBHOOK_ALLOW_PRIVATE: 'true' });

    // Act
    await t.answer(/Country/, KEYS.enter);
    await t.answer(/Webhook URL/, 'http://127.0.0.1:9/hook', KEYS.enter);
    await t.answer(/signing secret/, KEYS.enter);
    const code = await t.exitCode();

    // Assert
    const screen = plain(t.screen);
    expect(code).toBe(0);
    const secret = /Webhook signing secret: (whsec_[0-9A-Za-z]{32})/.exec(screen)?.[1];
    const keyId = Number(/Created test key (\d+)/.exec(screen)?.[1]);
    expect(secret).toBeDefined();
    expect(await app.server.services.keys.webhookSecret(keyId)).toBe(secret);
  });
});
