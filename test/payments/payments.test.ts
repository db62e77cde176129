import { aDraft, Tenant, useApp } from '../support/app';

const ctx = useApp();

async function aPaidAndAPartialInvoice(t: Tenant) {
  const paid = await aDraft(t);
  const partial = await aDraft(t);
  for (const invoice of [paid, partial]) await t.api.post(`/invoices/${invoice.id}/send`);
  const full = await t.api.post(`/invoices/${paid.id}/simulate-payment`);
  const part = await t.api.post(`/invoices/${partial.id}/simulate-payment`, { amount: 5 });
  return { paid, partial, payments: [full.body.payment, part.body.payment] };
}

describe('GET /payments', () => {
  test('when payments were recorded, then they are listed oldest first in the envelope', async () => {
    const t = await ctx.app.tenant();
    const { payments } = await aPaidAndAPartialInvoice(t);

    const res = await t.api.get('/payments');

    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(payments);
    expect(res.body.meta).toEqual({ current_page: 1, per_page: 20, total: 2, last_page: 1, next_after: null });
  });

  test('when filtered by status or invoice, then only matching payments are listed', async () => {
    const t = await ctx.app.tenant();
    const { partial, payments } = await aPaidAndAPartialInvoice(t);

    const succeeded = await t.api.get('/payments?status=succeeded');
    const refunded = await t.api.get('/payments?status=refunded');
    const ofInvoice = await t.api.get(`/payments?invoice_id=${partial.id}`);

    expect(succeeded.body.meta.total).toBe(2);
    expect(refunded.body.data).toEqual([]);
    expect(ofInvoice.body.data).toEqual([payments[1]]);
  });

  test('when filtered by an unknown status, then it is a 400', async () => {
    const res = await ctx.t.api.get('/payments?status=settled');

    expect(res.status).toBe(400);
    expect(res.body.error).toBe('bad_request');
  });

  test('when another business or a live key lists, then these payments are not there', async () => {
    const t = await ctx.app.tenant();
    await aPaidAndAPartialInvoice(t);
    const other = await ctx.app.tenant();
    const live = await ctx.app.tenant({ mode: 'live', businessId: t.businessId });

    expect((await other.api.get('/payments')).body.meta.total).toBe(0);
    expect((await live.api.get('/payments')).body.meta.total).toBe(0);
  });

  test('when the key lacks payments:read, then it is 403', async () => {
    const reader = await ctx.app.tenant({ scopes: ['invoices:read'] });

    const res = await reader.api.get('/payments');

    expect(res.status).toBe(403);
    expect(res.body.required_scope).toBe('payments:read');
  });
});
