import { Credential } from '../../server/auth/credential';
import { systemClock } from '../../server/clock';
import { WebhookDelivery } from '../../server/events/deliveries';
import { Event } from '../../server/events/model';
import { DispatchedDelivery, Outbox } from '../../server/events/outbox';
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

  test('when the database does not number a multi-row insert consecutively, then each event and each delivery handed to the worker is written once, with its own id', async () => {
    // Arrange: an outbox whose worker takes every delivery, over inserts that answer no ids (as with innodb_autoinc_lock_mode = 2)
    const t = await ctx.app.tenant({ webhookUrl: 'http://127.0.0.1:9/hooks' });
    const handed: { event: Event; deliveries: DispatchedDelivery[] }[] = [];
    const outbox = new Outbox(ctx.app.db, systemClock);
    outbox.dispatchTo({ lease: { leaseSeconds: 60, clock: systemClock, counters: ['attempts'] }, takes: () => true, dispatch: (event, deliveries) => handed.push({ event, deliveries }) });
    const unnumbered = [Event, WebhookDelivery].map((model) => {
      const insert = model.insertOwned.bind(model);
      return jest.spyOn(model, 'insertOwned').mockImplementation(async (conn, rows) => {
        await insert(conn, rows);
        return undefined;
      });
    });

    // Act
    try {
      await ctx.app.db.transaction((trx) =>
        outbox.recordMany(trx, [
          { actor: credentialOf(t.businessId), type: 'invoice.paid', data: { invoice: { id: 1 } } },
          { actor: credentialOf(t.businessId), type: 'invoice.overdue', data: { invoice: { id: 2 } } },
        ]),
      );
    } finally {
      unnumbered.forEach((spy) => spy.mockRestore());
    }

    // Assert
    const events = await ctx.app.db.knex('events').where({ business_id: t.businessId }).orderBy('id');
    const rows = await ctx.app.db.knex('webhook_deliveries').where({ business_id: t.businessId }).orderBy('id');
    expect(events.map((event: { type: string }) => event.type)).toEqual(['invoice.paid', 'invoice.overdue']);
    expect(rows.map((row: { event_id: number }) => row.event_id)).toEqual(events.map((event: { id: number }) => event.id));
    expect(handed.map(({ event, deliveries }) => [event.id, deliveries.map(({ delivery }) => [delivery.id, delivery.event_id])])).toEqual(
      rows.map((row: { id: number; event_id: number }) => [row.event_id, [[row.id, row.event_id]]]),
    );
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
