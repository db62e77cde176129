import { startApp, TestApp } from '../support/app';
import { CliResult, requireBuild, runCli } from '../support/cli';
import { hasScript, KEYS, plain, Terminal } from '../support/terminal';

let app: TestApp;

function cli(...args: string[]): Promise<CliResult> {
  return runCli(app.databaseUrl, args, {}, 20_000);
}

interface BusinessRecord {
  id: number;
  name: string;
  currency: string;
  country: string | null;
  plan: string;
}

async function createBusiness(...extra: string[]): Promise<BusinessRecord> {
  const res = await cli('business', 'create', '--name', 'Acme Ltd', '--currency', 'GBP', '--country', 'GB', ...extra, '--json');
  expect(res.code).toBe(0);
  return JSON.parse(res.stdout);
}

async function storedBusiness(id: number) {
  return app.db.knex('businesses').where({ id }).first('name', 'currency', 'country', 'plan');
}

beforeAll(async () => {
  requireBuild();
  app = await startApp();
});
afterAll(() => app.stop());

describe('invoicing business create', () => {
  test('when --json is given, then it prints exactly the business record', async () => {
    const res = await cli('business', 'create', '--name', 'Shop', '--currency', 'usd', '--plan', 'pro', '--json');

    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({ id: expect.any(Number), name: 'Shop', currency: 'USD', country: null, plan: 'pro' });
  });
});

describe('invoicing business list', () => {
  test('when businesses exist, then --json prints an array of their records including the new ones', async () => {
    const first = await createBusiness();
    const second = await createBusiness('--plan', 'pro');

    const res = await cli('business', 'list', '--json');

    expect(res.code).toBe(0);
    const list: BusinessRecord[] = JSON.parse(res.stdout);
    expect(list).toEqual(expect.arrayContaining([first, second]));
    expect(list.map((b) => b.id)).toEqual([...list.map((b) => b.id)].sort((a, b) => a - b));
  });

  test('when printed for people, then it is a table with a header row and one row per business', async () => {
    const created = await createBusiness();

    const res = await cli('business', 'list');

    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^ID\s+NAME\s+CURRENCY\s+COUNTRY\s+PLAN$/m);
    expect(res.stdout).toMatch(new RegExp(`^${created.id}\\s+Acme Ltd\\s+GBP\\s+GB\\s+free$`, 'm'));
  });
});

describe('invoicing business show', () => {
  test('when --json is given, then it prints the business record', async () => {
    const created = await createBusiness();

    const res = await cli('business', 'show', String(created.id), '--json');

    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual(created);
  });

  test('when printed for people, then it shows key: value lines and how to list its keys', async () => {
    const created = await createBusiness();

    const res = await cli('business', 'show', String(created.id));

    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`id: ${created.id}\nname: Acme Ltd\ncurrency: GBP\ncountry: GB\nplan: free\n`);
    expect(res.stdout).toContain(`invoicing keys list --business ${created.id}`);
  });

  test('when the business does not exist, then it exits 1 saying so', async () => {
    const res = await cli('business', 'show', '999999');

    expect(res.code).toBe(1);
    expect(res.stderr).toBe('error: Business not found\n');
  });

  test('when the id is not a number, then it exits 2', async () => {
    const res = await cli('business', 'show', 'abc');

    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/business id must be a positive integer/);
  });
});

describe('invoicing business update', () => {
  test.each([
    ['--name', ['--name', 'Acme Group'], { name: 'Acme Group' }],
    ['--currency', ['--currency', 'eur'], { currency: 'EUR' }],
    ['--country', ['--country', 'de'], { country: 'DE' }],
    ['--no-country', ['--no-country'], { country: null }],
    ['--plan', ['--plan', 'enterprise'], { plan: 'enterprise' }],
  ])('when only %s is given, then only that field changes', async (_flag, args, changed) => {
    const created = await createBusiness();

    const res = await cli('business', 'update', String(created.id), ...args, '--json');

    expect(res.code).toBe(0);
    const expected = { ...created, ...changed };
    expect(JSON.parse(res.stdout)).toEqual(expected);
    expect(await storedBusiness(created.id)).toEqual({ name: expected.name, currency: expected.currency, country: expected.country, plan: expected.plan });
  });

  test('when nothing to change is given, then it exits 2 naming the options', async () => {
    const created = await createBusiness();

    const res = await cli('business', 'update', String(created.id));

    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--name.*--currency.*--country.*--no-country.*--plan/);
  });

  test('when the currency is not ISO 4217, then it exits 1 with the field message and nothing changes', async () => {
    const created = await createBusiness();

    const res = await cli('business', 'update', String(created.id), '--name', 'Renamed', '--currency', 'ABC');

    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/--currency: must be an ISO 4217 code/);
    expect(await storedBusiness(created.id)).toEqual({ name: 'Acme Ltd', currency: 'GBP', country: 'GB', plan: 'free' });
  });

  test('when the country is not ISO 3166-1, then it exits 1 with the field message', async () => {
    const created = await createBusiness();

    const res = await cli('business', 'update', String(created.id), '--country', 'ZZ');

    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/--country: must be an ISO 3166-1 alpha-2 code/);
  });

  test('when the business does not exist, then it exits 1 saying so', async () => {
    const res = await cli('business', 'update', '999999', '--name', 'Ghost');

    expect(res.code).toBe(1);
    expect(res.stderr).toBe('error: Business not found\n');
  });
});

(hasScript ? describe : describe.skip)('invoicing business create on a terminal', () => {
  test('when the currency is missing, then it is asked for and the business is created with the answer', async () => {
    const terminal = new Terminal(app.databaseUrl, ['business', 'create', '--name', 'Asked', '--json']);

    await terminal.answer(/Currency/, 'JPY', KEYS.enter);
    const code = await terminal.exitCode();

    expect(code).toBe(0);
    const printed = JSON.parse(/\{.*\}/.exec(plain(terminal.screen))![0]);
    expect(printed).toEqual({ id: expect.any(Number), name: 'Asked', currency: 'JPY', country: null, plan: 'free' });
    expect(await storedBusiness(printed.id)).toEqual({ name: 'Asked', currency: 'JPY', country: null, plan: 'free' });
  });
});
