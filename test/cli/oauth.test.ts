/** `invoicing oauth apps|grants` and `invoicing owners`: apps with a secret shown once, owners with scrypt passwords from standard input. */
import { startApp, Tenant, TestApp } from '../support/app';
import { CliResult, requireBuild, runCli } from '../support/cli';

let app: TestApp;
let t: Tenant;

function cli(args: string[], input?: string): Promise<CliResult> {
  return runCli(app.databaseUrl, args, {}, 20_000, undefined, input);
}

beforeAll(async () => {
  requireBuild();
  app = await startApp();
  t = await app.tenant();
});
afterAll(() => app.stop());

describe('invoicing oauth apps', () => {
  test('when an app is created, then its secret is shown once and stored only as a hash', async () => {
    // Act
    const created = await cli(['oauth', 'apps', 'create', '--name', 'Acme Platform', '--redirect-uri', 'https://acme.example/callback', '--redirect-uri', 'http://127.0.0.1:8765/cb', '--json']);
    const body = JSON.parse(created.stdout);
    const shown = await cli(['oauth', 'apps', 'show', String(body.id), '--json']);

    // Assert
    expect(created.code).toBe(0);
    expect(body).toMatchObject({
      name: 'Acme Platform',
      client_id: expect.stringMatching(/^app_[0-9A-Za-z]{24}$/),
      client_secret: expect.stringMatching(/^oas_[0-9A-Za-z]{40}$/),
      public: false,
      redirect_uris: ['https://acme.example/callback', 'http://127.0.0.1:8765/cb'],
    });
    expect(shown.stdout).not.toContain(body.client_secret);
    const row = await app.db.knex('oauth_apps').where({ id: body.id }).first();
    expect(JSON.stringify(row)).not.toContain(body.client_secret);
  });

  test('when a public app is created, then it has no secret', async () => {
    const created = await cli(['oauth', 'apps', 'create', '--name', 'Acme Mobile', '--redirect-uri', 'http://localhost:9000/cb', '--public', '--json']);

    expect(JSON.parse(created.stdout)).toMatchObject({ public: true, client_secret: null });
  });

  test.each([
    ['an http URI that is not the loopback', 'http://acme.example/callback'],
    ['a URI with a fragment', 'https://acme.example/callback#x'],
    ['a relative URI', '/callback'],
  ])('when the redirect URI is %s, then it exits 2 naming the rule', async (_case, uri) => {
    const res = await cli(['oauth', 'apps', 'create', '--name', 'Bad', '--redirect-uri', uri]);

    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/redirect URI must be an absolute https URL/);
  });

  test('when an app is revoked, then it shows as revoked and cannot be revoked twice', async () => {
    const created = JSON.parse((await cli(['oauth', 'apps', 'create', '--name', 'Gone', '--redirect-uri', 'https://gone.example/cb', '--json'])).stdout);

    const revoked = await cli(['oauth', 'apps', 'revoke', String(created.id), '--json']);
    const again = await cli(['oauth', 'apps', 'revoke', String(created.id)]);

    expect(JSON.parse(revoked.stdout).revoked_at).toEqual(expect.any(String));
    expect(again.code).toBe(1);
  });
});

describe('invoicing owners', () => {
  test('when an owner is created with --password-stdin, then the password is stored with scrypt and signs in', async () => {
    // Act
    const created = await cli(['owners', 'create', '--business', String(t.businessId), '--email', 'Ada@Acme.example', '--password-stdin', '--json'], 'correct horse battery staple\n');
    const owner = JSON.parse(created.stdout);

    // Assert
    expect(created.code).toBe(0);
    expect(owner).toMatchObject({ business_id: t.businessId, email: 'Ada@Acme.example' });
    const row = await app.db.knex('business_owners').where({ id: owner.id }).first();
    expect(row.password_hash).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(JSON.stringify(row)).not.toContain('correct horse');
    expect(await app.server.services.owners.signIn('ada@acme.example', 'correct horse battery staple')).toMatchObject({ id: owner.id });
    expect(await app.server.services.owners.signIn('ada@acme.example', 'wrong password!!')).toBeNull();
  });

  test('when the password is short or the e-mail taken, then it exits 2 and nothing is created', async () => {
    const short = await cli(['owners', 'create', '--business', String(t.businessId), '--email', 'short@acme.example', '--password-stdin'], 'short');
    await cli(['owners', 'create', '--business', String(t.businessId), '--email', 'taken@acme.example', '--password-stdin'], 'a long enough password');
    const taken = await cli(['owners', 'create', '--business', String(t.businessId), '--email', 'TAKEN@acme.example', '--password-stdin'], 'a long enough password');

    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/at least 12 characters/);
    expect(taken.code).toBe(2);
    expect(taken.stderr).toMatch(/already the e-mail of an owner/);
  });

  test('when the password is reset, then only the new one signs in', async () => {
    const owner = JSON.parse((await cli(['owners', 'create', '--business', String(t.businessId), '--email', 'reset@acme.example', '--password-stdin', '--json'], 'the first password')).stdout);

    const reset = await cli(['owners', 'reset-password', String(owner.id), '--password-stdin'], 'the second password');

    expect(reset.code).toBe(0);
    expect(await app.server.services.owners.signIn('reset@acme.example', 'the first password')).toBeNull();
    expect(await app.server.services.owners.signIn('reset@acme.example', 'the second password')).toMatchObject({ id: owner.id });
  });

  test('when no password is given and there is no terminal, then it says to use --password-stdin', async () => {
    const res = await cli(['owners', 'create', '--business', String(t.businessId), '--email', 'nopass@acme.example']);

    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--password-stdin/);
  });
});

describe('invoicing oauth grants', () => {
  test('when a business has authorized nothing, then the list says so', async () => {
    const res = await cli(['oauth', 'grants', 'list', '--business', String(t.businessId)]);

    expect(res.code).toBe(0);
    expect(res.stdout).toContain('authorized no app');
  });
});
