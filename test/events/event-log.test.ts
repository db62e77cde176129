/** GET /events: the log a receiver that missed deliveries catches up from. */
import { aDraft, useApp } from '../support/app';

const ctx = useApp();

describe('GET /events', () => {
  test('when invoices are created and sent, then their events are listed oldest first with the payload a delivery carries', async () => {
    const t = await ctx.app.tenant();
    const draft = await aDraft(t);
    await t.api.post(`/invoices/${draft.id}/send`);

    const res = await t.api.get('/events');

    expect(res.status).toBe(200);
    expect(res.body.data.map((e: { type: string }) => e.type)).toEqual(['invoice.created', 'invoice.sent']);
    const [created, sent] = res.body.data;
    expect(created).toEqual(
      expect.objectContaining({ business_id: t.businessId, livemode: false, idempotency_key: expect.any(String), data: { invoice: expect.objectContaining({ id: draft.id, status: 'draft' }) } }),
    );
    expect(sent.data.invoice.status).toBe('sent');
    expect(sent.id).toBeGreaterThan(created.id);
    expect(res.body.meta).toEqual(expect.objectContaining({ total: 2, next_after: null }));
  });

  test('when a receiver passes the last event id it saw as after, then it gets only the later ones', async () => {
    const t = await ctx.app.tenant();
    await aDraft(t);
    const seen = (await t.api.get('/events')).body.data.at(-1).id as number;
    await aDraft(t);

    const res = await t.api.get(`/events?after=${seen}`);

    expect(res.body.data).toHaveLength(1);
    expect(res.body.data[0].id).toBeGreaterThan(seen);
  });

  test('when filtered by type, then only that type is listed; an unknown type is a 400', async () => {
    const t = await ctx.app.tenant();
    const draft = await aDraft(t);
    await t.api.post(`/invoices/${draft.id}/send`);

    const sent = await t.api.get('/events?type=invoice.sent');
    const unknown = await t.api.get('/events?type=invoice.exploded');

    expect(sent.body.data.map((e: { type: string }) => e.type)).toEqual(['invoice.sent']);
    expect(unknown.status).toBe(400);
  });

  test('when another business or the other mode has events, then they are not listed', async () => {
    const t = await ctx.app.tenant();
    const other = await ctx.app.tenant();
    const live = await ctx.app.tenant({ businessId: t.businessId, mode: 'live' });
    await aDraft(other);
    await aDraft(live);

    const res = await t.api.get('/events');

    expect(res.body.data).toEqual([]);
  });

  test('when an event is older than 30 days, then it is no longer listed', async () => {
    const t = await ctx.app.tenant();
    await aDraft(t);
    await aDraft(t);
    const [old] = (await t.api.get('/events')).body.data;
    await ctx.app.db.knex('events').where({ id: old.id }).update({ created_at: '2020-01-01 00:00:00.000' });

    const res = await t.api.get('/events');

    expect(res.body.data.map((e: { id: number }) => e.id)).not.toContain(old.id);
    expect(res.body.data).toHaveLength(1);
  });

  test('when a key holds only a read scope of another resource, then it may read the events', async () => {
    const t = await ctx.app.tenant({ scopes: ['expenses:read'] });

    const res = await t.api.get('/events');

    expect(res.status).toBe(200);
  });

  test('when a reader waits for the next event and one is committed meanwhile, then the answer brings it at once', async () => {
    const t = await ctx.app.tenant();
    await aDraft(t);
    const seen = (await t.api.get('/events')).body.data.at(-1).id as number;

    const started = Date.now();
    const waiting = t.api.get(`/events?after=${seen}&wait=10`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const draft = await aDraft(t);
    const res = await waiting;

    expect(res.body.data.map((e: { data: { invoice: { id: number } } }) => e.data.invoice.id)).toEqual([draft.id]);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  test('when a reader waits and nothing happens, then the answer is an empty page after the wait; a wait over 30 s is a 400', async () => {
    const t = await ctx.app.tenant();

    const started = Date.now();
    const res = await t.api.get('/events?wait=1');
    const tooLong = await t.api.get('/events?wait=31');

    expect(res.body.data).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(tooLong.status).toBe(400);
  });
});
