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

const LEGAL_IDENTITY_FIELDS = [
  'legal_name',
  'address_line1',
  'address_line2',
  'city',
  'postal_code',
  'state',
  'tax_id',
  'registration_number',
  'email',
  'phone',
  'iban',
  'bic',
  'invoice_footer',
  'peppol_id',
];

/** The profile `business show` and `business update` print of a business that has no legal identity set. */
function profileOf(record: BusinessRecord): Record<string, unknown> {
  return { ...record, ...Object.fromEntries(LEGAL_IDENTITY_FIELDS.map((field) => [field, null])), legal_name: record.name, einvoice_format: null, reminder_offsets: [] };
}

async function storedIdentity(id: number): Promise<Record<string, unknown>> {
  return app.db.knex('businesses').where({ id }).first(LEGAL_IDENTITY_FIELDS);
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
  test('when --json is given, then it prints the business profile: the record and its legal identity', async () => {
    const created = await createBusiness();

    const res = await cli('business', 'show', String(created.id), '--json');

    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual(profileOf(created));
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
    expect(res.stderr).toBe('error: Business 999999 not found\n');
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
    ['--country with an empty string', ['--country', ''], { country: null }],
    ['--plan', ['--plan', 'enterprise'], { plan: 'enterprise' }],
  ])('when only %s is given, then only that field changes', async (_flag, args, changed) => {
    const created = await createBusiness();

    const res = await cli('business', 'update', String(created.id), ...args, '--json');

    expect(res.code).toBe(0);
    const expected = { ...created, ...changed };
    expect(JSON.parse(res.stdout)).toEqual({ ...profileOf(created), ...changed, legal_name: expected.name });
    expect(await storedBusiness(created.id)).toEqual({ name: expected.name, currency: expected.currency, country: expected.country, plan: expected.plan });
  });

  test('when nothing to change is given, then it exits 2 naming the options', async () => {
    const created = await createBusiness();

    const res = await cli('business', 'update', String(created.id));

    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--name.*--currency.*--country.*--no-country.*--plan/);
  });

  test('when the currency is not ISO 4217, then it exits 2 with the field message and nothing changes', async () => {
    const created = await createBusiness();

    const res = await cli('business', 'update', String(created.id), '--name', 'Renamed', '--currency', 'ABC');

    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--currency "ABC": must be an ISO 4217 code/);
    expect(await storedBusiness(created.id)).toEqual({ name: 'Acme Ltd', currency: 'GBP', country: 'GB', plan: 'free' });
  });

  test('when the country is not ISO 3166-1, then it exits 2 with the field message', async () => {
    const created = await createBusiness();

    const res = await cli('business', 'update', String(created.id), '--country', 'ZZ');

    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--country "ZZ": must be an ISO 3166-1 alpha-2 code/);
  });

  test('when the legal identity options are given, then each is stored in its checked form and printed', async () => {
    // Arrange
    const created = await createBusiness();
    const options = [
      ['--legal-name', 'Acme Limited'],
      ['--address-line1', '1 High Street'],
      ['--address-line2', 'Suite 4'],
      ['--city', 'London'],
      ['--postal-code', 'EC1A 1BB'],
      ['--state', 'Greater London'],
      ['--tax-id', 'GB 123 4567 89'],
      ['--registration-number', '01234567'],
      ['--email', 'billing@acme.example'],
      ['--phone', '+44 20 7946 0000'],
      ['--iban', 'gb29 nwbk 6016 1331 9268 19'],
      ['--bic', 'nwbkgb2l'],
      ['--invoice-footer', 'Registered in England and Wales'],
      ['--peppol-id', '0088:5060012349998'],
    ].flat();

    // Act
    const res = await cli('business', 'update', String(created.id), ...options, '--json');

    // Assert
    expect(res.code).toBe(0);
    const identity = {
      legal_name: 'Acme Limited',
      address_line1: '1 High Street',
      address_line2: 'Suite 4',
      city: 'London',
      postal_code: 'EC1A 1BB',
      state: 'Greater London',
      tax_id: 'GB 123 4567 89',
      registration_number: '01234567',
      email: 'billing@acme.example',
      phone: '+44 20 7946 0000',
      iban: 'GB29NWBK60161331926819',
      bic: 'NWBKGB2L',
      invoice_footer: 'Registered in England and Wales',
      peppol_id: '0088:5060012349998',
    };
    expect(JSON.parse(res.stdout)).toEqual({ ...created, ...identity, einvoice_format: null, reminder_offsets: [] });
    expect(await storedIdentity(created.id)).toEqual(identity);
  });

  test('when a legal identity option is an empty string, then that field is cleared and the others are kept', async () => {
    const created = await createBusiness();
    await cli('business', 'update', String(created.id), '--legal-name', 'Acme Limited', '--invoice-footer', 'Thank you', '--iban', 'GB29NWBK60161331926819');

    const res = await cli('business', 'update', String(created.id), '--legal-name', '', '--invoice-footer', '', '--json');

    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ legal_name: 'Acme Ltd', invoice_footer: null, iban: 'GB29NWBK60161331926819' });
    expect(await storedIdentity(created.id)).toMatchObject({ legal_name: null, invoice_footer: null, iban: 'GB29NWBK60161331926819' });
  });

  test('when an e-invoice format is given, then invoice e-mails carry it until none is given', async () => {
    const created = await createBusiness();

    const set = await cli('business', 'update', String(created.id), '--einvoice-format', 'facturx', '--json');
    const shown = await cli('business', 'show', String(created.id));
    const cleared = await cli('business', 'update', String(created.id), '--einvoice-format', 'none', '--json');
    const wrong = await cli('business', 'update', String(created.id), '--einvoice-format', 'pdf');

    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout).einvoice_format).toBe('facturx');
    expect(shown.stdout).toContain('\ne-invoice format: facturx\n');
    expect(JSON.parse(cleared.stdout).einvoice_format).toBeNull();
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/--einvoice-format "pdf": must be one of ubl, cii, facturx, xrechnung-ubl, xrechnung-cii or none/);
  });

  test('when printed for people, then show lists the legal identity, - for what is not set', async () => {
    const created = await createBusiness();
    await cli('business', 'update', String(created.id), '--tax-id', 'GB123456789', '--city', 'London');

    const res = await cli('business', 'show', String(created.id));

    expect(res.code).toBe(0);
    expect(res.stdout).toContain('plan: free\nlegal name: Acme Ltd\naddress line1: -\n');
    expect(res.stdout).toContain('\ncity: London\n');
    expect(res.stdout).toContain('\ntax id: GB123456789\n');
  });

  test.each([
    ['an IBAN whose check digits do not match', ['--iban', 'GB28 NWBK 6016 1331 9268 19'], /^error: invalid option\n {2}--iban "GB28 NWBK 6016 1331 9268 19": is not a valid IBAN: its check digits do not match/],
    ['an IBAN of the wrong length for its country', ['--iban', 'DE89 3704 0044 0532 0130'], /--iban "DE89 3704 0044 0532 0130": must be an IBAN: one of DE has 22 characters, not 20/],
    ['a BIC of 9 characters', ['--bic', 'NWBKGB2LX'], /--bic "NWBKGB2LX": must be a BIC of 8 or 11 characters/],
    ['a German VAT number of 10 digits', ['--tax-id', 'DE1234567890'], /--tax-id "DE1234567890": is not a valid DE VAT number: DE must be followed by 9 digits/],
    ['a Peppol ID without a scheme', ['--peppol-id', '5060012349998'], /--peppol-id "5060012349998": must be a Peppol participant ID SCHEME:ID/],
    ['an e-mail that is not one', ['--email', 'billing'], /--email "billing": must be a valid email/],
  ])('when given %s, then it exits 2 naming the option and nothing changes', async (_case, args, message) => {
    const created = await createBusiness();

    const res = await cli('business', 'update', String(created.id), '--name', 'Renamed', ...args);

    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(message);
    expect(res.stdout).toBe('');
    expect(await storedBusiness(created.id)).toEqual({ name: 'Acme Ltd', currency: 'GBP', country: 'GB', plan: 'free' });
  });

  test('when the business does not exist, then it exits 1 saying so', async () => {
    const res = await cli('business', 'update', '999999', '--name', 'Ghost');

    expect(res.code).toBe(1);
    expect(res.stderr).toBe('error: Business 999999 not found\n');
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
