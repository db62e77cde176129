/** `invoicing business gateway set|show|remove`: credentials sealed at rest, shown by their last four characters. */
import { useCliApp } from '../support/cli';

const SECRET_KEY = 'sk_live_cliGatewayKeyAbCd9876';
const WEBHOOK_SECRET = 'whsec_cliEndpointSecretWxYz4321';

const ctx = useCliApp('live');
const { cli } = ctx;

describe('invoicing business gateway', () => {
  test('when set, then show prints only the last four characters and the stored secrets are sealed', async () => {
    // Act
    const set = await cli('business', 'gateway', 'set', String(ctx.t.businessId), '--provider', 'stripe', '--secret-key', SECRET_KEY, '--webhook-secret', WEBHOOK_SECRET, '--json');
    const shown = await cli('business', 'gateway', 'show', String(ctx.t.businessId));

    // Assert
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ business_id: ctx.t.businessId, provider: 'stripe', secret_key_last4: '9876', webhook_secret_last4: '4321' });
    expect(shown.stdout).toContain('secret key: …9876');
    expect(shown.stdout + set.stdout).not.toContain(SECRET_KEY);
    const row = await ctx.app.db.knex('payment_gateways').where({ business_id: ctx.t.businessId }).first();
    expect(JSON.stringify(row)).not.toContain(SECRET_KEY);
    expect(JSON.stringify(row)).not.toContain(WEBHOOK_SECRET);
    expect(await ctx.app.server.services.gateways.isSetUp(ctx.t.businessId)).toBe(true);
  });

  test('when the secret key is not a Stripe secret key, then it exits 2 naming the field and nothing is stored', async () => {
    const other = await ctx.app.tenant({ mode: 'live' });

    const res = await cli('business', 'gateway', 'set', String(other.businessId), '--secret-key', 'pk_live_publishable123456', '--webhook-secret', WEBHOOK_SECRET);

    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/secret key must be a Stripe secret key/);
    expect(await ctx.app.server.services.gateways.isSetUp(other.businessId)).toBe(false);
  });

  test.each(['sk_test_cliGatewayKeyAbCd9876', 'rk_test_cliGatewayKeyAbCd9876'])('when the secret key is a test-mode key (%s), then it exits 2 saying a live key is needed and nothing is stored', async (testKey) => {
    // Arrange
    const other = await ctx.app.tenant({ mode: 'live' });

    // Act
    const res = await cli('business', 'gateway', 'set', String(other.businessId), '--secret-key', testKey, '--webhook-secret', WEBHOOK_SECRET);

    // Assert
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/secret key must be a live key \(sk_live_… or rk_live_…\): test mode never calls a gateway/);
    expect(res.stderr).not.toContain(testKey);
    expect(await ctx.app.server.services.gateways.isSetUp(other.businessId)).toBe(false);
  });

  test('when removed, then the business has no gateway', async () => {
    const other = await ctx.app.tenant({ mode: 'live' });
    await cli('business', 'gateway', 'set', String(other.businessId), '--secret-key', SECRET_KEY, '--webhook-secret', WEBHOOK_SECRET);

    const removed = await cli('business', 'gateway', 'remove', String(other.businessId), '--json');
    const shown = await cli('business', 'gateway', 'show', String(other.businessId));

    expect(JSON.parse(removed.stdout)).toEqual({ removed: true });
    expect(shown.stdout).toContain('has no payment gateway');
  });
});
