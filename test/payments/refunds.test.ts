/** `POST /payments/{id}/refund` for payments recorded here (test-mode and received elsewhere): the contract's "Refunds". */
import { systemActor } from '../../server/auth/actor';
import { aDraft, eventsOf, useApp } from '../support/app';

// One key makes every request of this file: more than the default 120 a minute.
const ctx = useApp({ rateLimitPerMinute: 1000 });

async function aPaid(body: Record<string, unknown> = {}, t = ctx.t): Promise<{ invoice: any; payment: any }> {
  const draft = await aDraft(t);
  await t.api.post(`/invoices/${draft.id}/initiate-payment`);
  const res = await t.api.post(`/invoices/${draft.id}/payments`, { method: 'bank_transfer', reference: 'TRX-1', ...body });
  return { invoice: res.body.invoice, payment: res.body.payment };
}

describe('POST /payments/{id}/refund', () => {
  test('when a paid invoice\'s payment is refunded in full, then the payment is refunded, the invoice is sent with nothing paid, and it can be voided', async () => {
    // Arrange
    const { invoice, payment } = await aPaid();

    // Act
    const res = await ctx.t.api.post(`/payments/${payment.id}/refund`, { reason: 'Order cancelled', metadata: { ticket: 'T-1' } });

    // Assert
    expect(res.status).toBe(201);
    expect(res.body.refund).toMatchObject({ payment_id: payment.id, amount: 150, currency: 'USD', reason: 'Order cancelled', status: 'succeeded', metadata: { ticket: 'T-1' } });
    expect(res.body.payment).toMatchObject({ status: 'refunded', amount: 150, amount_refunded: 150 });
    expect(res.body.invoice).toMatchObject({ status: 'sent', amount_paid: 0, amount_due: 150, paid_at: null });
    const refunded = (await eventsOf(ctx.app, ctx.t.businessId)).filter((e) => e.type === 'payment.refunded' && e.data.payment.id === payment.id);
    expect(refunded).toHaveLength(1);
    expect(refunded[0].data.invoice.status).toBe('sent');
    expect((await ctx.t.api.post(`/invoices/${invoice.id}/void`)).body.invoice.status).toBe('void');
  });

  test('when refunded in two parts, then the invoice goes partial, then sent, and a third refund is refused', async () => {
    const { payment } = await aPaid();

    const first = await ctx.t.api.post(`/payments/${payment.id}/refund`, { amount: 40 });
    const second = await ctx.t.api.post(`/payments/${payment.id}/refund`);
    const third = await ctx.t.api.post(`/payments/${payment.id}/refund`, { amount: 1 });

    expect(first.body.payment).toMatchObject({ status: 'succeeded', amount_refunded: 40 });
    expect(first.body.invoice).toMatchObject({ status: 'partial', amount_paid: 110 });
    expect(second.body.refund.amount).toBe(110);
    expect(second.body.invoice).toMatchObject({ status: 'sent', amount_paid: 0 });
    expect(third.status).toBe(422);
    expect(third.body.error).toBe('invalid_state');
  });

  test('when a test-mode (simulated) payment is refunded, then it is recorded the same way', async () => {
    const draft = await aDraft(ctx.t);
    await ctx.t.api.post(`/invoices/${draft.id}/initiate-payment`);
    const payment = (await ctx.t.api.post(`/invoices/${draft.id}/simulate-payment`, { amount: 50 })).body.payment;

    const res = await ctx.t.api.post(`/payments/${payment.id}/refund`);

    expect(res.status).toBe(201);
    expect(res.body.refund.gateway_reference).toBeNull();
    expect(res.body.invoice).toMatchObject({ status: 'sent', amount_paid: 0 });
  });

  test.each([
    ['more than is left', { amount: 150.01 }, 'amount'],
    ['too many decimals', { amount: 1.001 }, 'amount'],
    ['a zero amount', { amount: 0 }, 'amount'],
    ['a reason of 501 characters', { reason: 'r'.repeat(501) }, 'reason'],
    ['an unknown field', { note: 'x' }, 'note'],
  ])('when the refund has %s, then 422 names the field and nothing changes', async (_case, body, field) => {
    const { invoice, payment } = await aPaid();

    const res = await ctx.t.api.post(`/payments/${payment.id}/refund`, body);

    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toContain(field);
    expect((await ctx.t.api.get(`/invoices/${invoice.id}`)).body.invoice).toMatchObject({ status: 'paid', amount_paid: 150 });
    expect((await ctx.t.api.get(`/payments/${payment.id}`)).body.payment.amount_refunded).toBe(0);
  });

  test('when refunds race for the whole payment, then only what was paid is returned', async () => {
    const { invoice, payment } = await aPaid();

    const answers = await Promise.all([1, 2, 3].map(() => ctx.t.api.post(`/payments/${payment.id}/refund`, { amount: 100 })));

    expect(answers.map((a) => a.status).sort()).toEqual([201, 422, 422]);
    expect((await ctx.t.api.get(`/payments/${payment.id}`)).body.payment.amount_refunded).toBe(100);
    expect((await ctx.t.api.get(`/invoices/${invoice.id}`)).body.invoice.amount_paid).toBe(50);
  });

  test('when a refund is retried with its Idempotency-Key, then it is made once', async () => {
    const { payment } = await aPaid();
    const headers = { 'Idempotency-Key': `refund-${payment.id}` };

    const first = await ctx.t.api.post(`/payments/${payment.id}/refund`, { amount: 10 }, { headers });
    const again = await ctx.t.api.post(`/payments/${payment.id}/refund`, { amount: 10 }, { headers });

    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.refund.id).toBe(first.body.refund.id);
    expect((await ctx.t.api.get(`/payments/${payment.id}`)).body.payment.amount_refunded).toBe(10);
  });

  test('when another business refunds the payment, then it is a 404', async () => {
    const { payment } = await aPaid();
    const other = await ctx.app.tenant();

    const res = await other.api.post(`/payments/${payment.id}/refund`);

    expect(res.status).toBe(404);
  });

  test('when the key holds invoices:write (not payments:write), then it may refund; with only payments:read, it may not', async () => {
    const writer = await ctx.app.tenant({ scopes: ['invoices:write', 'clients:write'] });
    const reader = await ctx.app.tenant({ businessId: writer.businessId, scopes: ['payments:read'] });
    const { payment } = await aPaid({}, writer);

    const refused = await reader.api.post(`/payments/${payment.id}/refund`, { amount: 1 });
    const refunded = await writer.api.post(`/payments/${payment.id}/refund`, { amount: 1 });

    expect(refused.status).toBe(403);
    expect(refunded.status).toBe(201);
  });
});

describe('a refund whose stored response was lost', () => {
  test('when the process died after the refund but before its response was stored, then a retry with the same key answers the same refund and refunds nothing more', async () => {
    // Arrange: a refund made, then its stored response gone, as if the process had died in between
    const { payment } = await aPaid();
    const headers = { 'Idempotency-Key': `lost-${payment.id}` };
    const first = await ctx.t.api.post(`/payments/${payment.id}/refund`, { amount: 30 }, { headers });
    await ctx.app.db.knex('idempotency_keys').where({ idempotency_key: headers['Idempotency-Key'] }).delete();

    // Act
    const retry = await ctx.t.api.post(`/payments/${payment.id}/refund`, { amount: 30 }, { headers });

    // Assert
    expect(retry.status).toBe(201);
    expect(retry.body.refund.id).toBe(first.body.refund.id);
    expect((await ctx.t.api.get(`/payments/${payment.id}`)).body.payment.amount_refunded).toBe(30);
    expect((await eventsOf(ctx.app, ctx.t.businessId)).filter((e) => e.type === 'payment.refunded' && e.data.payment.id === payment.id)).toHaveLength(1);
  });
});

describe('GET /refunds and GET /refunds/{id}', () => {
  test('when a payment was refunded twice, then both refunds are listed oldest first, filtered by payment, invoice and status, and each reads back', async () => {
    // Arrange
    const { invoice, payment } = await aPaid();
    const other = await aPaid();
    const first = (await ctx.t.api.post(`/payments/${payment.id}/refund`, { amount: 10, reason: 'Damaged' })).body.refund;
    const second = (await ctx.t.api.post(`/payments/${payment.id}/refund`, { amount: 20 })).body.refund;
    await ctx.t.api.post(`/payments/${other.payment.id}/refund`, { amount: 5 });

    // Act
    const byPayment = await ctx.t.api.get(`/refunds?payment_id=${payment.id}`);
    const byInvoice = await ctx.t.api.get(`/refunds?invoice_id=${invoice.id}&status=succeeded`);
    const noneFailed = await ctx.t.api.get(`/refunds?payment_id=${payment.id}&status=failed`);
    const one = await ctx.t.api.get(`/refunds/${first.id}`);

    // Assert
    expect(byPayment.status).toBe(200);
    expect(byPayment.body.data.map((r: any) => r.id)).toEqual([first.id, second.id]);
    expect(byInvoice.body.data.map((r: any) => r.id)).toEqual([first.id, second.id]);
    expect(noneFailed.body.data).toEqual([]);
    expect(one.status).toBe(200);
    expect(one.body.refund).toEqual({ ...first, failure_reason: null });
    expect(one.body.refund).toMatchObject({ payment_id: payment.id, invoice_id: invoice.id, amount: 10, reason: 'Damaged', status: 'succeeded', failure_reason: null });
  });

  test('when refunds fill more than one page, then the after cursor walks them without repeating one', async () => {
    const { payment } = await aPaid();
    for (const amount of [1, 2, 3]) await ctx.t.api.post(`/payments/${payment.id}/refund`, { amount });

    const page1 = await ctx.t.api.get(`/refunds?payment_id=${payment.id}&per_page=2`);
    const page2 = await ctx.t.api.get(`/refunds?payment_id=${payment.id}&per_page=2&after=${page1.body.meta.next_after}`);

    expect(page1.body.data.map((r: any) => r.amount)).toEqual([1, 2]);
    expect(page1.body.meta).toMatchObject({ total: 3, next_after: page1.body.data[1].id });
    expect(page2.body.data.map((r: any) => r.amount)).toEqual([3]);
  });

  test.each([
    ['payments:read', 200],
    ['invoices:read', 200],
    ['expenses:read', 403],
  ] as const)('when the key holds only %s, then reading refunds answers %s', async (scope, status) => {
    const reader = await ctx.app.tenant({ businessId: ctx.t.businessId, scopes: [scope] });
    const { payment } = await aPaid();
    const refund = (await ctx.t.api.post(`/payments/${payment.id}/refund`, { amount: 1 })).body.refund;

    expect((await reader.api.get('/refunds')).status).toBe(status);
    expect((await reader.api.get(`/refunds/${refund.id}`)).status).toBe(status);
  });

  test('when another business or the other mode asks for a refund, then it is a 404 and their lists leave it out', async () => {
    const { payment } = await aPaid();
    const refund = (await ctx.t.api.post(`/payments/${payment.id}/refund`, { amount: 1 })).body.refund;
    const stranger = await ctx.app.tenant();
    const live = await ctx.app.tenant({ businessId: ctx.t.businessId, mode: 'live' });

    expect((await stranger.api.get(`/refunds/${refund.id}`)).status).toBe(404);
    expect((await live.api.get(`/refunds/${refund.id}`)).status).toBe(404);
    expect((await stranger.api.get('/refunds')).body.data).toEqual([]);
    expect((await live.api.get(`/refunds?payment_id=${payment.id}`)).body.data).toEqual([]);
  });

  test.each([
    ['an unknown status', 'status=refunded'],
    ['a payment id that is not a number', 'payment_id=abc'],
    ['an invoice id of zero', 'invoice_id=0'],
  ])('when the list is asked with %s, then it is a 400', async (_case, query) => {
    const res = await ctx.t.api.get(`/refunds?${query}`);

    expect(res.status).toBe(400);
  });
});

describe('a test-mode refund that fails at the bank (trigger payment.refund_failed)', () => {
  test('when the bank fails a refund, then its amount counts as paid again, the invoice is paid again and payment.refund_failed fires', async () => {
    // Arrange
    const { invoice, payment } = await aPaid();
    const refund = (await ctx.t.api.post(`/payments/${payment.id}/refund`, { amount: 40 })).body.refund;
    const actor = systemActor('cli', { businessId: ctx.t.businessId, livemode: false });

    // Act
    const result = await ctx.app.server.services.refunds.simulateBankFailure(actor, refund.id);

    // Assert
    expect(result.refund).toMatchObject({ id: refund.id, status: 'failed', failure_reason: expect.stringContaining('bank') });
    expect((await ctx.t.api.get(`/payments/${payment.id}`)).body.payment).toMatchObject({ amount_refunded: 0, status: 'succeeded' });
    expect((await ctx.t.api.get(`/invoices/${invoice.id}`)).body.invoice).toMatchObject({ amount_paid: 150, status: 'paid' });
    const failed = (await eventsOf(ctx.app, ctx.t.businessId)).filter((e) => e.type === 'payment.refund_failed' && e.data.refund.id === refund.id);
    expect(failed).toHaveLength(1);
    expect(failed[0].data).toMatchObject({ payment: { id: payment.id }, invoice: { id: invoice.id, status: 'paid' } });
  });

  test('when a live refund is asked to fail through the simulation, then it is refused', async () => {
    const live = systemActor('cli', { businessId: ctx.t.businessId, livemode: true });

    await expect(ctx.app.server.services.refunds.simulateBankFailure(live, 1)).rejects.toMatchObject({ status: 403 });
  });
});

describe('a bank failure after the invoice was paid again', () => {
  test('when the refund of a first payment fails after a second payment settled the invoice, then the money back is not counted twice and refunding it again leaves the invoice paid', async () => {
    // Arrange: paid, refunded in full, then paid again by another payment
    const { invoice, payment } = await aPaid();
    const refund = (await ctx.t.api.post(`/payments/${payment.id}/refund`)).body.refund;
    await ctx.t.api.post(`/invoices/${invoice.id}/payments`, { method: 'cash' });
    const actor = systemActor('cli', { businessId: ctx.t.businessId, livemode: false });

    // Act: the first refund fails at the bank, and the business returns that money again
    await ctx.app.server.services.refunds.simulateBankFailure(actor, refund.id);
    const again = await ctx.t.api.post(`/payments/${payment.id}/refund`);

    // Assert
    expect(again.status).toBe(201);
    expect(again.body.payment).toMatchObject({ amount_refunded: 150, status: 'refunded' });
    expect(again.body.invoice).toMatchObject({ status: 'paid', amount_paid: 150 });
  });
});
