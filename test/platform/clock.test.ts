/**
 * One clock: a business's test mode may have a frozen time (business_clocks, as a Stripe test clock),
 * and what a request of that business and mode writes, and the events it records, are dated by it;
 * its live mode and every other business keep the real time. The API that moves it is tested in
 * test/test-clock/; here the stored clock is set through the reader's own store.
 */
import { systemActor } from '../../server/auth/actor';
import { aClient, aDraft, useApp } from '../support/app';

const ctx = useApp();
const FROZEN = new Date('2031-03-14T09:26:53.589Z');

/** Whether an ISO time is the real time of this test run (within a minute). */
const isRealTime = (iso: string) => Math.abs(Date.parse(iso) - Date.now()) < 60_000;

describe('a business clock', () => {
  test('when a test-mode business clock is frozen, then what that business creates and sends is dated by it; its live mode and other businesses keep the real time', async () => {
    const frozen = await ctx.app.tenant();
    const live = await ctx.app.tenant({ mode: 'live', businessId: frozen.businessId });
    const other = await ctx.app.tenant();
    await ctx.app.server.services.clocks.freezeTestMode(frozen.businessId, FROZEN);

    const draft = await aDraft(frozen, { issue_date: undefined, due_date: undefined });
    const sent = await frozen.api.post(`/invoices/${draft.id}/send`);
    const liveDraft = await aDraft(live);
    const otherDraft = await aDraft(other);

    expect(draft).toMatchObject({ created_at: FROZEN.toISOString(), updated_at: FROZEN.toISOString(), issue_date: '2031-03-14' });
    expect(sent.status).toBe(200);
    expect(sent.body.invoice).toMatchObject({ sent_at: FROZEN.toISOString(), updated_at: FROZEN.toISOString() });
    expect(isRealTime(liveDraft.created_at)).toBe(true);
    expect(isRealTime(otherDraft.created_at)).toBe(true);
  });

  test('when a frozen clock is moved on, then the very next request reads the new time', async () => {
    const t = await ctx.app.tenant();
    await ctx.app.server.services.clocks.freezeTestMode(t.businessId, FROZEN);
    const later = new Date(FROZEN.getTime() + 30 * 86_400_000);

    await ctx.app.server.services.clocks.freezeTestMode(t.businessId, later);
    const draft = await aDraft(t);

    expect(draft.created_at).toBe(later.toISOString());
  });

  test('when the owner simulates a payment from the CLI, then it is dated by the business\'s frozen clock', async () => {
    const t = await ctx.app.tenant();
    await ctx.app.server.services.clocks.freezeTestMode(t.businessId, FROZEN);
    const draft = await aDraft(t);
    await t.api.post(`/invoices/${draft.id}/send`);

    const { payment, invoice } = await ctx.app.server.services.paymentPath.simulateForOwner(draft.id);

    expect(payment).toMatchObject({ paid_at: FROZEN.toISOString(), created_at: FROZEN.toISOString() });
    expect(invoice).toMatchObject({ status: 'paid', paid_at: FROZEN.toISOString() });
  });

  test('when a client views and pays a frozen test-mode invoice on its payment page, then the view and the payment are dated by the business\'s clock', async () => {
    // Arrange
    const t = await ctx.app.tenant();
    await ctx.app.server.services.clocks.freezeTestMode(t.businessId, FROZEN);
    const draft = await aDraft(t);
    const page = new URL((await t.api.post(`/invoices/${draft.id}/initiate-payment`)).body.payment_url);
    const link = `${ctx.app.url}${page.pathname}`;

    // Act
    const html = await (await fetch(link)).text();
    const formToken = /name="form_token" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const paid = await fetch(link, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ form_token: formToken }).toString() });

    // Assert
    expect(paid.status).toBe(303);
    const invoice = (await t.api.get(`/invoices/${draft.id}`)).body.invoice;
    expect(invoice).toMatchObject({ status: 'paid', viewed_at: FROZEN.toISOString(), paid_at: FROZEN.toISOString() });
    expect((await t.api.get(`/payments?invoice_id=${draft.id}`)).body.data[0]).toMatchObject({ paid_at: FROZEN.toISOString() });
  });

  test('when a client signs a frozen test-mode contract on its signing page, then the signature is dated by the business\'s clock', async () => {
    // Arrange
    const t = await ctx.app.tenant();
    await ctx.app.server.services.clocks.freezeTestMode(t.businessId, FROZEN);
    const client = await t.api.post('/clients', aClient());
    const contract = (await t.api.post('/contracts', { title: 'Website build', client_id: client.body.client.id, body: 'We build.', amount: 1000, currency: 'eur' })).body.contract;
    const page = new URL(contract.signing_url);
    const link = `${ctx.app.url}${page.pathname}`;
    const html = await (await fetch(link)).text();
    const formToken = /name="form_token" value="([^"]+)"/.exec(html)?.[1] ?? '';

    // Act
    const signed = await fetch(link, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ form_token: formToken, action: 'sign', full_name: 'Grace Hopper', agree: 'yes' }).toString() });

    // Assert
    expect(signed.status).toBe(303);
    const after = (await t.api.get(`/contracts/${contract.id}`)).body.contract;
    expect(after.signatures[0]).toMatchObject({ signed_at: FROZEN.toISOString() });
  });

  test('when a test-mode clock is frozen in the past, then its events are dated by it too, and the 30-day event log still lists them', async () => {
    // Arrange
    const t = await ctx.app.tenant();
    await ctx.app.server.services.clocks.freezeTestMode(t.businessId, new Date('2020-01-01T00:00:00.000Z'));

    // Act
    const draft = await aDraft(t);
    const events = (await t.api.get('/events?type=invoice.created')).body.data;

    // Assert
    expect(draft.created_at).toBe('2020-01-01T00:00:00.000Z');
    expect(events).toHaveLength(1);
    expect(events[0].created_at).toBe('2020-01-01T00:00:00.000Z');
  });

  test('when a test-mode clock is frozen ahead of the real time, then its events are dated by it, and the 30-day event log lists them', async () => {
    const t = await ctx.app.tenant();
    await ctx.app.server.services.clocks.freezeTestMode(t.businessId, FROZEN);

    await aDraft(t);
    const events = (await t.api.get('/events?type=invoice.created')).body.data;

    expect(events.map((event: { created_at: string }) => event.created_at)).toEqual([FROZEN.toISOString()]);
  });

  test('when a live-mode clock is stored, then the database refuses it, and live mode is read as the real time without a query', async () => {
    const t = await ctx.app.tenant();
    const now = '2031-03-14 09:26:53.589';
    const liveRow = { business_id: t.businessId, livemode: 1, frozen_time: now, created_at: now, updated_at: now };

    // Matched by message: better-sqlite3's error may come from another test file's realm in a reused
    // jest worker, where it is no `instanceof Error` here and toThrow() would not see it.
    await expect(ctx.app.db.knex('business_clocks').insert(liveRow)).rejects.toHaveProperty('message', expect.stringContaining('business_clocks_test_mode_only'));
    const clock = await ctx.app.server.services.clocks.of(systemActor('cli', { businessId: t.businessId, livemode: true }));

    expect(isRealTime(clock.now().toISOString())).toBe(true);
  });
});
