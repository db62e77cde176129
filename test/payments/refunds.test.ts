/** `POST /payments/{id}/refund` for payments recorded here (test-mode and received elsewhere): the contract's "Refunds". */
import { aDraft, eventsOf, useApp } from '../support/app';

const ctx = useApp();

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
