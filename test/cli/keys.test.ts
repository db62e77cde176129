/**
 * `invoicing keys show|update|rotate` and the scope checklist, run as the real binary against the
 * scratch database of a running app, whose key cache lives 5 seconds as in production.
 */
import { createdJson } from '../../cli/commands/keys';
import { ALL_SCOPES } from '../../server/auth/scopes';
import { newKeySchema } from '../../server/keys/schema';
import { validateInput } from '../../server/validation';
import { aDraft, startApp, Tenant, TestApp } from '../support/app';
import { CliResult, requireBuild, runCli } from '../support/cli';
import { eventually } from '../support/eventually';
import { startReceiver, TestReceiver } from '../support/receiver';
import { hasScript, KEYS, plain, Terminal } from '../support/terminal';

let app: TestApp;
let receiver: TestReceiver;

function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(app.databaseUrl, args, env, 20_000);
}

async function json(args: string[], env: Record<string, string> = {}): Promise<any> {
  const res = await cli([...args, '--json'], env);
  if (res.code !== 0) throw new Error(`invoicing ${args.join(' ')} exited ${res.code}: ${res.stderr}`);
  return JSON.parse(res.stdout);
}

const pingStatus = async (key: string) => (await app.api(key).get('/ping')).status;

beforeAll(async () => {
  requireBuild();
  receiver = await startReceiver();
  app = await startApp({ keyCacheTtlMs: 5000 });
});
afterAll(async () => {
  await app?.stop();
  await receiver?.stop();
});
beforeEach(() => receiver.answer({ status: 200 }));

/**
 * The fixtures are made through the services, as the commands' own actions make them: the commands
 * under test here are `keys show|update|rotate`; `business create` and `keys create` are run as
 * commands in cli.test.ts. A key is returned as `keys create --json` prints it.
 */
async function aBusiness(): Promise<number> {
  return (await app.server.services.businesses.create({ name: 'Key Shop', currency: 'USD' })).id;
}

async function aKey({ webhookUrl }: { webhookUrl?: string } = {}, businessId?: number): Promise<any> {
  const input = { businessId: businessId ?? (await aBusiness()), mode: 'test', scopes: [...ALL_SCOPES], webhookUrl };
  const created = await app.server.services.keys.create(validateInput(newKeySchema, input));
  return JSON.parse(JSON.stringify(createdJson(created)));
}

describe('invoicing keys show', () => {
  test('when a key is shown, then --json prints its record without its value or secret', async () => {
    const key = await aKey({ webhookUrl: 'https://hooks.example.com/in' });

    const shown = await cli(['keys', 'show', String(key.id), '--json']);

    expect(shown.code).toBe(0);
    expect(shown.stdout).not.toContain(key.key);
    expect(shown.stdout).not.toContain(key.webhook_secret);
    expect(JSON.parse(shown.stdout)).toEqual({
      id: key.id,
      business_id: key.business_id,
      mode: 'test',
      livemode: false,
      scopes: key.scopes,
      prefix: key.key.slice(0, 13),
      last4: key.key.slice(-4),
      webhook_url: 'https://hooks.example.com/in',
      webhook_secret_set: true,
      status: 'active',
      created_at: expect.any(String),
      revoked_at: null,
      expires_at: null,
    });
  });

  test('when a key is shown to a person, then it is masked and its status is given', async () => {
    const key = await aKey();

    const shown = await cli(['keys', 'show', String(key.id)]);

    expect(shown.stdout).toContain(`${key.key.slice(0, 13)}…${key.key.slice(-4)}`);
    expect(shown.stdout).toMatch(/Status: +active/);
    expect(shown.stdout).not.toContain(key.key);
  });

  test.each([
    ['an unknown key id', ['999999'], 1, /API key 999999 not found/],
    ['a key id that is not a number', ['3x'], 2, /key id must be a positive integer/],
  ])('when keys show gets %s, then it exits %s', async (_case, args, code, message) => {
    const res = await cli(['keys', 'show', ...args]);

    expect(res.code).toBe(code);
    expect(res.stderr).toMatch(message);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('invoicing keys list', () => {
  test('when keys are listed for a person, then a table shows them masked, never their values', async () => {
    const first = await aKey();
    const second = await aKey({}, first.business_id);
    await cli(['keys', 'revoke', String(second.id), '--yes']);

    const listed = await cli(['keys', 'list', '--business', String(first.business_id)]);

    const lines = listed.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID +MODE +KEY +STATUS +CREATED +WEBHOOK +SCOPES$/);
    expect(lines[1]).toMatch(new RegExp(`^${first.id} +test +svc_test_\\w{4}…${first.key.slice(-4)} +active .* all$`));
    expect(lines[2]).toMatch(/ revoked /);
    expect(listed.stdout).not.toContain(first.key);
    expect(listed.stdout).not.toContain(second.key);
  });
});

describe('invoicing keys update', () => {
  test('when the scopes are changed, then the running server applies them within 5 seconds', async () => {
    const key = await aKey();

    const updated = await json(['keys', 'update', String(key.id), '--scopes', 'clients:read']);

    expect(updated.scopes).toEqual(['clients:read']);
    await eventually(async () => (await app.api(key.key).post('/clients', { name: 'N', email: 'n@example.com' })).status === 403, 5500);
    expect((await app.api(key.key).get('/clients')).status).toBe(200);
  });

  test('when a webhook URL is set on a key without one, then a signing secret is generated and printed once', async () => {
    const key = await aKey();

    const updated = await json(['keys', 'update', String(key.id), '--webhook-url', 'https://hooks.example.com/new']);
    const shown = await json(['keys', 'show', String(key.id)]);

    expect(updated).toMatchObject({ webhook_url: 'https://hooks.example.com/new', webhook_secret_set: true, webhook_secret: expect.stringMatching(/^whsec_/) });
    expect(shown.webhook_secret).toBeUndefined();
    expect(await app.server.services.keys.webhookSecret(key.id)).toBe(updated.webhook_secret);
  });

  test('when a new secret is given, then deliveries are signed with it', async () => {
    const key = await aKey({ webhookUrl: 'https://hooks.example.com/in' });

    const updated = await json(['keys', 'update', String(key.id), '--webhook-secret', 'a-new-secret-of-24-bytes']);

    expect(updated.webhook_secret).toBeUndefined();
    expect(await app.server.services.keys.webhookSecret(key.id)).toBe('a-new-secret-of-24-bytes');
  });

  test('when the webhook URL changes, then pending retries go to the new address', async () => {
    receiver.answer({ status: 500 });
    const key = await aKey({ webhookUrl: `${receiver.url}/old` });
    const tenant: Tenant = { businessId: key.business_id, key: key.key, keyId: key.id, api: app.api(key.key) };
    await aDraft(tenant);
    await eventually(async () => (await app.db.knex('webhook_deliveries').where({ api_key_id: key.id, attempts: 1 })).length === 1, 10_000);

    await json(['keys', 'update', String(key.id), '--webhook-url', `${receiver.url}/new`], { WEBHOOK_ALLOW_PRIVATE: 'true' });

    const [delivery] = await app.db.knex('webhook_deliveries').where({ api_key_id: key.id });
    expect(delivery).toMatchObject({ status: 'pending', url: `${receiver.url}/new` });
  });

  test('when the webhook is removed, then new events make no delivery for the key', async () => {
    const key = await aKey({ webhookUrl: `${receiver.url}/in` });
    const tenant: Tenant = { businessId: key.business_id, key: key.key, keyId: key.id, api: app.api(key.key) };

    const updated = await json(['keys', 'update', String(key.id), '--remove-webhook']);
    await aDraft(tenant);

    expect(updated.webhook_url).toBeNull();
    expect(await app.db.knex('webhook_deliveries').where({ api_key_id: key.id })).toHaveLength(0);
  });

  test.each([
    ['no change at all', [], /nothing to change/],
    ['an unknown scope', ['--scopes', 'clients:read,admin'], /unknown scope\(s\) admin/],
    ['a URL and its removal', ['--webhook-url', 'https://hooks.example.com/x', '--remove-webhook'], /either --webhook-url or --remove-webhook/],
    ['a secret and a generated one', ['--webhook-secret', 'sixteen-bytes-at-least', '--generate-webhook-secret'], /either/],
  ])('when keys update gets %s, then it exits 2 and changes nothing', async (_case, args, message) => {
    const key = await aKey();

    const res = await cli(['keys', 'update', String(key.id), ...args]);

    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(message);
    expect((await json(['keys', 'show', String(key.id)])).scopes).toHaveLength(10);
  });

  test.each([
    ['a private webhook URL', ['--webhook-url', 'http://192.168.1.20/hook'], /--webhook-url "http:\/\/192\.168\.1\.20\/hook": .*private/],
    ['a URL that is not one', ['--webhook-url', 'not a url'], /--webhook-url "not a url": /],
    ['a secret that is too short', ['--webhook-secret', 'short'], /--webhook-secret: length must be at least 16/],
  ])('when keys update gets %s, then it exits 2 and changes nothing', async (_case, args, message) => {
    const key = await aKey();

    const res = await cli(['keys', 'update', String(key.id), ...args]);

    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(message);
    expect(await json(['keys', 'show', String(key.id)])).toMatchObject({ webhook_url: null, webhook_secret_set: false });
  });

  test('when a revoked key is updated, then it is refused', async () => {
    const key = await aKey();
    await cli(['keys', 'revoke', String(key.id), '--yes']);

    const res = await cli(['keys', 'update', String(key.id), '--scopes', 'all']);

    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/is revoked/);
  });

  test('when the key does not exist, then keys update exits 1', async () => {
    const res = await cli(['keys', 'update', '999999', '--scopes', 'all']);

    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/API key 999999 not found/);
  });
});

describe('invoicing keys rotate', () => {
  test('when a key is rotated with a grace period, then both work until it ends and then only the new one', async () => {
    const old = await aKey({ webhookUrl: `${receiver.url}/in` });

    const rotated = await json(['keys', 'rotate', String(old.id), '--expire-in', '4s']);
    const rotatedAt = Date.now();

    expect(rotated).toMatchObject({ replaces: old.id, scopes: old.scopes, webhook_url: old.webhook_url, webhook_secret: old.webhook_secret });
    expect(rotated.replaced).toMatchObject({ id: old.id, status: 'expiring', revoked_at: null, expires_at: expect.any(String) });
    expect(await pingStatus(rotated.key)).toBe(200);
    expect(await pingStatus(old.key)).toBe(200);
    const stoppedAfter = (await eventually(async () => (await pingStatus(old.key)) === 401, 8000)) + (Date.now() - rotatedAt);
    expect(Date.parse(rotated.replaced.expires_at)).toBeLessThanOrEqual(Date.now());
    expect(stoppedAfter).toBeGreaterThanOrEqual(3000);
    expect(await pingStatus(rotated.key)).toBe(200);
    expect((await json(['keys', 'show', String(old.id)])).status).toBe('expired');
  });

  test('when an event happens during the grace period, then only the new key receives it', async () => {
    const old = await aKey({ webhookUrl: `${receiver.url}/in` });
    const rotated = await json(['keys', 'rotate', String(old.id), '--expire-in', '1h']);
    const tenant: Tenant = { businessId: old.business_id, key: old.key, keyId: old.id, api: app.api(old.key) };

    await aDraft(tenant);

    const deliveries = await app.db.knex('webhook_deliveries').where({ business_id: old.business_id });
    expect(deliveries.map((d: { api_key_id: number }) => d.api_key_id)).toEqual([rotated.id]);
  });

  test('when a key is rotated without a terminal or flags, then the old one is revoked at once', async () => {
    const old = await aKey();

    const rotated = await json(['keys', 'rotate', String(old.id)]);

    expect(rotated.replaced).toMatchObject({ status: 'revoked', revoked_at: expect.any(String), expires_at: null });
    await eventually(async () => (await pingStatus(old.key)) === 401, 5500);
  });

  test('when a key already being rotated out is rotated again, then it is refused', async () => {
    const old = await aKey();
    await json(['keys', 'rotate', String(old.id), '--expire-in', '1h']);

    const res = await cli(['keys', 'rotate', String(old.id), '--expire-now']);

    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/being rotated out/);
  });

  test.each([
    ['a duration without a unit', ['--expire-in', '24']],
    ['a grace period over 30 days', ['--expire-in', '31d']],
    ['both --expire-in and --expire-now', ['--expire-in', '1h', '--expire-now']],
  ])('when keys rotate gets %s, then it exits 2 and rotates nothing', async (_case, args) => {
    const old = await aKey();

    const res = await cli(['keys', 'rotate', String(old.id), ...args]);

    expect(res.code).toBe(2);
    expect(await app.db.knex('api_keys').where({ business_id: old.business_id })).toHaveLength(1);
  });
});

(hasScript ? describe : describe.skip)('on a terminal', () => {
  test('when the scopes are missing, then they are picked from a checklist and the key works with exactly those', async () => {
    const businessId = await aBusiness();
    const terminal = new Terminal(app.databaseUrl, ['keys', 'create', '--business', String(businessId), '--mode', 'test']);

    await terminal.answer(/Scopes/, KEYS.space, KEYS.down, KEYS.down, KEYS.space, KEYS.enter);

    expect(await terminal.exitCode()).toBe(0);
    const key = /Key, shown only this once: (svc_test_\w+)/.exec(plain(terminal.screen))![1];
    const ping = await app.api(key).get('/ping');
    expect(ping.status).toBe(200);
    expect(ping.body.scopes).toEqual(['invoices:read', 'contracts:read']);
  });

  test('when the business is missing, then it is picked from the list of businesses, and the key is made for the one picked', async () => {
    // Arrange: the newest business, the last of the list (one up from the first).
    const businessId = await aBusiness();
    const terminal = new Terminal(app.databaseUrl, ['keys', 'create', '--mode', 'test', '--scopes', 'all']);

    // Act
    await terminal.answer(/Business/, KEYS.up, KEYS.enter);

    // Assert
    expect(await terminal.exitCode()).toBe(0);
    expect(plain(terminal.screen)).toMatch(new RegExp(`Created test key \\d+ for business ${businessId} \\(scopes: all\\)`));
  });

  test('when no scope is picked, then the checklist asks again', async () => {
    const businessId = await aBusiness();
    const terminal = new Terminal(app.databaseUrl, ['keys', 'create', '--business', String(businessId), '--mode', 'live']);

    await terminal.answer(/Scopes/, KEYS.enter);
    await terminal.answer(/pick at least one/, 'a', KEYS.enter);

    expect(await terminal.exitCode()).toBe(0);
    expect(plain(terminal.screen)).toMatch(/Created live key \d+ for business \d+ \(scopes: all\)/);
  });

  test('when a rotation is asked on a terminal, then the grace period is picked from a list', async () => {
    const old = await aKey();
    const terminal = new Terminal(app.databaseUrl, ['keys', 'rotate', String(old.id)]);

    await terminal.answer(/When should the old key stop working/, KEYS.down, KEYS.down, KEYS.enter);
    await terminal.answer(/Rotate key/, KEYS.enter);

    expect(await terminal.exitCode()).toBe(0);
    const shown = await json(['keys', 'show', String(old.id)]);
    expect(shown.status).toBe('expiring');
    expect(Date.parse(shown.expires_at) - Date.now()).toBeGreaterThan(23 * 3600 * 1000);
  });

  test('when NO_COLOR is set, then the table has no colours; without it, it has', async () => {
    const key = await aKey();
    const args = ['keys', 'list', '--business', String(key.business_id)];

    const coloured = new Terminal(app.databaseUrl, args);
    const plainOne = new Terminal(app.databaseUrl, args, { NO_COLOR: '1' });

    expect(await coloured.exitCode()).toBe(0);
    expect(await plainOne.exitCode()).toBe(0);
    const esc = '\x1b';
    expect(coloured.screen).toContain(`${esc}[1mID`);
    // Built from a string: a regex literal with ESC in it trips no-control-regex.
    expect(plainOne.screen).not.toMatch(new RegExp(`${esc}\\[[0-9;]*m`));
    expect(plainOne.screen).toMatch(/ID +MODE/);
  });
});
