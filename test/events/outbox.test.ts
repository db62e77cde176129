import { Credential } from '../../server/auth/credential';
import { eventsOf, useApp } from '../support/app';

const ctx = useApp();

describe('the event outbox', () => {
  function credentialOf(businessId: number): Credential {
    return { kind: 'api_key', id: 0, businessId, livemode: false, scopes: [], subject: 'test' };
  }

  test('when the change fails after writing its event, then the event is rolled back with it', async () => {
    const cred = credentialOf(ctx.t.businessId);

    const attempt = ctx.app.db.transaction(async (trx) => {
      await ctx.app.server.services.outbox.record(trx, cred, 'invoice.created', { invoice: { id: 1 } });
      throw new Error('the change failed after its first write');
    });

    await expect(attempt).rejects.toThrow('first write');
    expect(await eventsOf(ctx.app, ctx.t.businessId)).toEqual([]);
  });

  test('when the change commits, then its event is there with a fresh idempotency key', async () => {
    const cred = credentialOf(ctx.t.businessId);

    await ctx.app.db.transaction((trx) => ctx.app.server.services.outbox.record(trx, cred, 'invoice.paid', { invoice: { id: 2 } }));
    await ctx.app.db.transaction((trx) => ctx.app.server.services.outbox.record(trx, cred, 'invoice.paid', { invoice: { id: 2 } }));

    const events = await eventsOf(ctx.app, ctx.t.businessId);
    expect(events.map((e) => e.data)).toEqual([{ invoice: { id: 2 } }, { invoice: { id: 2 } }]);
    expect(events[0].idempotency_key).not.toBe(events[1].idempotency_key);
  });
});
