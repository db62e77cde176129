/** `invoicing business gateway set --secrets-stdin`: the Stripe secrets never on the command line (ps, shell history). */
import { runCli } from '../support/cli';
import { useCliApp } from '../support/cli';

const SECRET_KEY = 'sk_live_stdinGatewayKeyAbCd1357';
const WEBHOOK_SECRET = 'whsec_stdinEndpointSecretWxYz2468';

const ctx = useCliApp('live');

function setWithInput(businessId: number, input: string, ...extra: string[]) {
  return runCli(ctx.app.databaseUrl, ['business', 'gateway', 'set', String(businessId), '--secrets-stdin', ...extra], {}, 20_000, undefined, input);
}

describe('invoicing business gateway set --secrets-stdin', () => {
  test('when the secret key and the webhook secret come on two lines of standard input, then they are set, sealed, and open for the gateway', async () => {
    // Arrange
    const tenant = await ctx.app.tenant({ mode: 'live' });

    // Act
    const set = await setWithInput(tenant.businessId, `${SECRET_KEY}\n${WEBHOOK_SECRET}\n`, '--json');

    // Assert
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ business_id: tenant.businessId, secret_key_last4: '1357', webhook_secret_last4: '2468' });
    expect(set.stdout + set.stderr).not.toContain(SECRET_KEY);
    const notified = await fetch(`${ctx.app.url}/gateway/stripe/${tenant.businessId}/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
      body: '{}',
    });
    expect(notified.status).toBe(400); // the secrets opened; the made-up signature is refused
  });

  test('when the lines end in CRLF and are padded with spaces, then the secrets are read without them', async () => {
    const tenant = await ctx.app.tenant({ mode: 'live' });

    const set = await setWithInput(tenant.businessId, ` ${SECRET_KEY} \r\n${WEBHOOK_SECRET}\r\n`, '--json');

    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ secret_key_last4: '1357', webhook_secret_last4: '2468' });
  });

  test.each([
    ['one line', `${SECRET_KEY}\n`],
    ['nothing', ''],
    ['three lines', `${SECRET_KEY}\n${WEBHOOK_SECRET}\nextra\n`],
  ])('when standard input holds %s, then it exits 2 saying what it expects and nothing is stored', async (_what, input) => {
    const tenant = await ctx.app.tenant({ mode: 'live' });

    const set = await setWithInput(tenant.businessId, input);

    expect(set.code).toBe(2);
    expect(set.stderr).toMatch(/--secrets-stdin expects two lines: the secret key, then the webhook secret/);
    expect(set.stderr).not.toContain(SECRET_KEY);
    expect(await ctx.app.server.services.gateways.isSetUp(tenant.businessId)).toBe(false);
  });

  test('when --secrets-stdin is given with --secret-key, then it exits 2: the secrets come from one place', async () => {
    const tenant = await ctx.app.tenant({ mode: 'live' });

    const set = await setWithInput(tenant.businessId, `${SECRET_KEY}\n${WEBHOOK_SECRET}\n`, '--secret-key', SECRET_KEY);

    expect(set.code).toBe(2);
    expect(set.stderr).toMatch(/--secrets-stdin cannot be combined with --secret-key or --webhook-secret/);
  });

  test('when help is asked, then it shows --secrets-stdin and an example that keeps the secrets off the command line', async () => {
    const help = await ctx.cli('business', 'gateway', 'set', '--help');

    expect(help.stdout).toContain('--secrets-stdin');
    expect(help.stdout).toMatch(/printf .*\| invoicing business gateway set 3 --secrets-stdin/);
  });
});
