import { startApp, TestApp } from '../support/app';
import { CliResult, requireBuild, runCli } from '../support/cli';
import { eventually } from '../support/eventually';
import { hasScript, Terminal } from '../support/terminal';

let app: TestApp;

function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(app.databaseUrl, args, env, 20_000);
}

beforeAll(async () => {
  requireBuild();
  app = await startApp({ keyCacheTtlMs: 5000 });
});
afterAll(() => app.stop());

async function createBusiness(): Promise<number> {
  const res = await cli(['business', 'create', '--name', 'CLI Shop', '--currency', 'eur', '--json']);
  return JSON.parse(res.stdout).id;
}

describe('invoicing business create', () => {
  test('when given name and currency, then --json prints the business record', async () => {
    const res = await cli(['business', 'create', '--name', 'Café Ünïcode', '--currency', 'eur', '--country', 'fr', '--plan', 'pro', '--json']);

    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({ id: expect.any(Number), name: 'Café Ünïcode', currency: 'EUR', country: 'FR', plan: 'pro' });
  });

  test('when a required option is missing and there is no terminal, then it exits 2 naming the option', async () => {
    const res = await cli(['business', 'create', '--name', 'No currency']);

    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--currency/);
  });

  test('when the currency is not ISO 4217, then it exits 2 with a clear message', async () => {
    const res = await cli(['business', 'create', '--name', 'X', '--currency', 'ABC']);

    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/currency/);
  });
});

describe('invoicing keys', () => {
  test('when a key is created, then it is printed once, works against the API and is never listed', async () => {
    const businessId = await createBusiness();

    const created = await cli(['keys', 'create', '--business', String(businessId), '--mode', 'test', '--scopes', 'clients:read,clients:write', '--json']);
    const key = JSON.parse(created.stdout);
    const ping = await app.api(key.key).get('/ping');
    const listed = await cli(['keys', 'list', '--business', String(businessId), '--json']);

    expect(created.code).toBe(0);
    expect(key).toEqual({
      id: expect.any(Number),
      key: expect.stringMatching(/^svc_test_[0-9A-Za-z]{32,}$/),
      business_id: businessId,
      mode: 'test',
      scopes: ['clients:read', 'clients:write'],
      webhook_url: null,
    });
    expect(ping.status).toBe(200);
    expect(ping.body.scopes).toEqual(['clients:read', 'clients:write']);
    expect(listed.stdout).not.toContain(key.key);
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ id: key.id, mode: 'test', last4: key.key.slice(-4), revoked_at: null })]);
  });

  test('when --scopes all and a webhook URL are given, then the key has every scope and a generated signing secret', async () => {
    const businessId = await createBusiness();

    const res = await cli(
      ['keys', 'create', '--business', String(businessId), '--mode', 'live', '--scopes', 'all', '--webhook-url', 'https://hooks.example.com/in', '--json'],
    );
    const key = JSON.parse(res.stdout);

    expect(key.key).toMatch(/^svc_live_/);
    expect(key.scopes).toHaveLength(10);
    expect(key.webhook_url).toBe('https://hooks.example.com/in');
    expect(key.webhook_secret).toMatch(/^whsec_/);
  });

  test('when the webhook URL is on a private address and private URLs are not allowed, then it is refused', async () => {
    const businessId = await createBusiness();

    const res = await cli(['keys', 'create', '--business', String(businessId), '--mode', 'test', '--scopes', 'all', '--webhook-url', 'http://10.0.0.8/hook']);

    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/private/);
  });

  test.each([
    ['an unknown scope', ['--mode', 'test', '--scopes', 'clients:read,root']],
    ['a bad mode', ['--mode', 'staging', '--scopes', 'all']],
    ['a missing mode', ['--scopes', 'all']],
  ])('when keys create gets %s, then it exits 2', async (_case, args) => {
    const businessId = await createBusiness();

    const res = await cli(['keys', 'create', '--business', String(businessId), ...args]);

    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/error:/);
  });

  test('when the business does not exist, then keys create exits 1', async () => {
    const res = await cli(['keys', 'create', '--business', '999999', '--mode', 'test', '--scopes', 'all']);

    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/Business 999999 not found/);
  });

  test('when a key is revoked from the CLI, then the running server refuses it within 5 seconds', async () => {
    const businessId = await createBusiness();
    const key = JSON.parse((await cli(['keys', 'create', '--business', String(businessId), '--mode', 'test', '--scopes', 'all', '--json'])).stdout);
    expect((await app.api(key.key).get('/ping')).status).toBe(200);

    const revoked = await cli(['keys', 'revoke', String(key.id), '--json']);

    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout).revoked_at).toEqual(expect.any(String));
    await eventually(async () => (await app.api(key.key).get('/ping')).status === 401, 5500);
  });

  test('when a key is rotated, then the new key works and the old one stops', async () => {
    const businessId = await createBusiness();
    const old = JSON.parse((await cli(['keys', 'create', '--business', String(businessId), '--mode', 'test', '--scopes', 'clients:read', '--json'])).stdout);

    const rotated = JSON.parse((await cli(['keys', 'rotate', String(old.id), '--yes', '--json'])).stdout);

    expect(rotated).toMatchObject({ replaces: old.id, mode: 'test', scopes: ['clients:read'] });
    expect((await app.api(rotated.key).get('/ping')).status).toBe(200);
    await eventually(async () => (await app.api(old.key).get('/ping')).status === 401, 5500);
  });

  test('when keys are listed for a business that does not exist, then it exits 1', async () => {
    const res = await cli(['keys', 'list', '--business', '999999']);

    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/Business 999999 not found/);
  });

  test('when the key id is not a number, then revoke exits 2', async () => {
    const res = await cli(['keys', 'revoke', 'abc']);

    expect(res.code).toBe(2);
  });
});

describe('invoicing migrate', () => {
  test('when the database is up to date, then migrate says so', async () => {
    const res = await cli(['migrate', '--json']);

    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({ applied: [] });
  });
});

/** Runs the CLI on a pseudo-terminal, answers `question` with `keystrokes`, and returns the screen once it exits. */
async function onTerminal(args: string[], question: RegExp, keystrokes: string): Promise<string> {
  const terminal = new Terminal(app.databaseUrl, args);
  await terminal.answer(question, keystrokes);
  await terminal.exitCode();
  return terminal.screen;
}

(hasScript ? describe : describe.skip)('on a terminal', () => {
  test('when a required option is missing, then it is asked for', async () => {
    const screen = await onTerminal(['business', 'create', '--name', 'Asked', '--json'], /Currency/, 'JPY\r');

    expect(screen).toMatch(/Currency/);
    expect(screen).toMatch(/"name":"Asked","currency":"JPY"/);
  });

  test('when a revocation is not confirmed, then the key stays active', async () => {
    const businessId = await createBusiness();
    const key = JSON.parse((await cli(['keys', 'create', '--business', String(businessId), '--mode', 'test', '--scopes', 'all', '--json'])).stdout);

    const screen = await onTerminal(['keys', 'revoke', String(key.id)], /Revoke key/, 'n\r');

    expect(screen).toMatch(/Revoke key/);
    expect((await app.api(key.key).get('/ping')).status).toBe(200);
  });
});
