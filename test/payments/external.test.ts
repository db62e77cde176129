/** `POST /invoices/{id}/payments`: a payment received elsewhere, through the same payment path as every other. */
import { aDraft, eventsOf, Tenant, useApp } from '../support/app';

const ctx = useApp();

async function anIssued(t: Tenant = ctx.t): Promise<any> {
  const draft = await aDraft(t);
  await t.api.post(`/invoices/${draft.id}/initiate-payment`);
  return draft;
}

describe('POST /invoices/{id}/payments', () => {
  test('when a live invoice is paid by bank transfer, then the payment is external with its reference and the invoice is paid, with its events', async () => {
    // Arrange
    const live = await ctx.app.tenant({ mode: 'live' });
    const invoice = await anIssued(live);

    // Act
    const res = await live.api.post(`/invoices/${invoice.id}/payments`, { method: 'bank_transfer', reference: 'TRX-2026-0042', paid_at: '2026-11-20T09:30:00Z' });

    // Assert
    expect(res.status).toBe(201);
    expect(res.body.payment).toMatchObject({ amount: 150, gateway: 'external', method: 'bank_transfer', gateway_reference: 'TRX-2026-0042', livemode: true, paid_at: '2026-11-20T09:30:00.000Z', status: 'succeeded' });
    expect(res.body.invoice).toMatchObject({ status: 'paid', amount_due: 0 });
    const types = (await eventsOf(ctx.app, live.businessId)).filter((e) => e.data.invoice?.id === invoice.id).map((e) => e.type);
    expect(types).toEqual(['invoice.created', 'payment.received', 'invoice.paid']);
  });

  test('when part is paid twice with the same reference, then both payments are kept and the invoice is partial, then paid', async () => {
    const invoice = await anIssued();

    const first = await ctx.t.api.post(`/invoices/${invoice.id}/payments`, { amount: 100, method: 'cash', reference: 'SAME' });
    const second = await ctx.t.api.post(`/invoices/${invoice.id}/payments`, { amount: 50, method: 'cash', reference: 'SAME' });

    expect(first.body.invoice.status).toBe('partial');
    expect(second.status).toBe(201);
    expect(second.body.invoice.status).toBe('paid');
  });

  test('when paid_at is a minute ahead of the server\'s clock, then it is taken as now', async () => {
    const invoice = await anIssued();
    const before = Date.now();

    const res = await ctx.t.api.post(`/invoices/${invoice.id}/payments`, { method: 'cash', paid_at: new Date(before + 60_000).toISOString() });

    expect(res.status).toBe(201);
    expect(Date.parse(res.body.payment.paid_at)).toBeLessThanOrEqual(Date.now());
    expect(Date.parse(res.body.payment.paid_at)).toBeGreaterThanOrEqual(before);
  });

  test.each([
    ['more than is due', { amount: 151, method: 'cash' }, 'amount'],
    ['an unknown method', { method: 'bitcoin' }, 'method'],
    ['no method', {}, 'method'],
    ['a time in the future', { method: 'cash', paid_at: '2999-01-01T00:00:00Z' }, 'paid_at'],
    ['an amount with too many decimals', { amount: 1.005, method: 'cash' }, 'amount'],
  ])('when it comes with %s, then 422 names the field and nothing is recorded', async (_case, body, field) => {
    const invoice = await anIssued();

    const res = await ctx.t.api.post(`/invoices/${invoice.id}/payments`, body);

    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toContain(field);
    expect((await ctx.t.api.get(`/invoices/${invoice.id}`)).body.invoice.payments).toEqual([]);
  });

  test.each([
    ['a draft', async () => aDraft(ctx.t)],
    ['a void invoice', async () => {
      const invoice = await anIssued();
      await ctx.t.api.post(`/invoices/${invoice.id}/void`);
      return invoice;
    }],
  ])('when the invoice is %s, then it is 422 invalid_state', async (_case, make) => {
    const invoice = await make();

    const res = await ctx.t.api.post(`/invoices/${invoice.id}/payments`, { method: 'cash' });

    expect(res.status).toBe(422);
    expect(res.body.error).toBe('invalid_state');
  });

  test('when the key has only payments:write, then it may record; with only invoices:read, it may not', async () => {
    const invoice = await anIssued();
    const payer = await ctx.app.tenant({ businessId: ctx.t.businessId, scopes: ['payments:write'] });
    const reader = await ctx.app.tenant({ businessId: ctx.t.businessId, scopes: ['invoices:read'] });

    const refused = await reader.api.post(`/invoices/${invoice.id}/payments`, { method: 'check' });
    const allowed = await payer.api.post(`/invoices/${invoice.id}/payments`, { method: 'check' });

    expect(refused.status).toBe(403);
    expect(allowed.status).toBe(201);
  });
});
