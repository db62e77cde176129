import { aClient, aDraft, anInvoice, eventsOf, Tenant, useApp } from '../support/app';

const ctx = useApp({ baseUrl: 'https://pay.example.com' });

async function aClientId(t: Tenant = ctx.t): Promise<number> {
  return (await t.api.post('/clients', aClient())).body.client.id;
}

describe('POST /invoices', () => {
  test('when a draft is created with three items, then amounts are computed and it has no number yet', async () => {
    const clientId = await aClientId();

    const res = await ctx.t.api.post('/invoices', anInvoice(clientId, { notes: 'Thanks' }));

    expect(res.status).toBe(201);
    expect(res.body.invoice).toMatchObject({
      number: null,
      client_id: clientId,
      status: 'draft',
      currency: 'USD',
      issue_date: new Date().toISOString().slice(0, 10),
      due_date: '2099-12-31',
      subtotal: 150,
      default_tax_rate_ids: [],
      tax_exempt: 'none',
      tax_breakdown: [],
      total_excluding_tax: 150,
      total_tax: 0,
      rounding_amount: 0,
      total: 150,
      amount_paid: 0,
      amount_due: 150,
      notes: 'Thanks',
      buyer_reference: null,
      purchase_order: null,
      livemode: false,
      sent_at: null,
      payments: [],
    });
    const untaxed = { amount_excluding_tax: expect.any(Number), tax_rate_ids: [] };
    expect(res.body.invoice.items).toEqual([
      { id: expect.any(Number), description: 'Design', quantity: 2, unit_price: 50, amount: 100, ...untaxed },
      { id: expect.any(Number), description: 'Hosting', quantity: 1, unit_price: 30, amount: 30, ...untaxed },
      { id: expect.any(Number), description: 'Domain', quantity: 1, unit_price: 20, amount: 20, ...untaxed },
    ]);
    expect(res.body.invoice.items.map((item: { amount_excluding_tax: number }) => item.amount_excluding_tax)).toEqual([100, 30, 20]);
  });

  test('when it is created, then invoice.created is in the outbox with the invoice as the API shows it', async () => {
    const t = await ctx.app.tenant();

    const invoice = await aDraft(t);

    const events = await eventsOf(ctx.app, t.businessId);
    expect(events.map((e) => e.type)).toEqual(['invoice.created']);
    expect(events[0].idempotency_key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(events[0].data).toEqual({ invoice });
  });

  test.each([
    ['1.5 × 0.05 rounds half away from zero', 'USD', 1.5, 0.05, 0.08],
    ['0.5 × -0.05 rounds away from zero below zero too', 'USD', 0.5, -0.05, -0.03],
    ['0.3333 × 3 keeps four decimals of quantity', 'USD', 0.3333, 3, 1],
    ['JPY has no decimals', 'JPY', 3, 1200, 3600],
    ['1.5 × 101 JPY rounds to the yen', 'JPY', 1.5, 101, 152],
    ['KWD has three decimals', 'KWD', 2, 1.234, 2.468],
  ])('when %s, then the line amount is exact', async (_case, currency, quantity, unitPrice, amount) => {
    const items = [
      { description: 'Line', quantity, unit_price: unitPrice },
      { description: 'Base', quantity: 1, unit_price: 100 },
    ];

    const res = await ctx.t.api.post('/invoices', anInvoice(await aClientId(), { currency, items }));

    expect(res.status).toBe(201);
    expect(res.body.invoice.items[0].amount).toBe(amount);
    expect(res.body.invoice.total).toBe(amount + 100);
  });

  test('when a discount line is negative, then it reduces the total', async () => {
    const items = [
      { description: 'Work', quantity: 1, unit_price: 100 },
      { description: 'Discount', quantity: 1, unit_price: -20.5 },
    ];

    const res = await ctx.t.api.post('/invoices', anInvoice(await aClientId(), { items }));

    expect(res.status).toBe(201);
    expect(res.body.invoice.total).toBe(79.5);
  });

  test('when no currency or due date is given, then the business currency and 30 days apply', async () => {
    const t = await ctx.app.tenant({ currency: 'EUR' });
    const clientId = await aClientId(t);

    const res = await t.api.post('/invoices', anInvoice(clientId, { currency: undefined, due_date: undefined, issue_date: '2026-01-15' }));

    expect(res.status).toBe(201);
    expect(res.body.invoice).toMatchObject({ currency: 'EUR', issue_date: '2026-01-15', due_date: '2026-02-14' });
  });

  test.each([
    ['a 3-decimal USD price', { items: [{ description: 'A', quantity: 1, unit_price: 10.005 }] }, 'items.0.unit_price'],
    ['a JPY price with decimals', { currency: 'JPY', items: [{ description: 'A', quantity: 1, unit_price: 12.5 }] }, 'items.0.unit_price'],
    ['a price given as a string', { items: [{ description: 'A', quantity: 1, unit_price: '10' }] }, 'items.0.unit_price'],
    ['a zero quantity', { items: [{ description: 'A', quantity: 0, unit_price: 10 }] }, 'items.0.quantity'],
    ['a negative quantity', { items: [{ description: 'A', quantity: -1, unit_price: 10 }] }, 'items.0.quantity'],
    ['a quantity with five decimals', { items: [{ description: 'A', quantity: 1.00001, unit_price: 10 }] }, 'items.0.quantity'],
    ['an empty description', { items: [{ description: ' ', quantity: 1, unit_price: 10 }] }, 'items.0.description'],
    ['no items', { items: [] }, 'items'],
    ['501 items', { items: Array.from({ length: 501 }, () => ({ description: 'A', quantity: 1, unit_price: 1 })) }, 'items'],
    ['discounts above the other lines', { items: [{ description: 'A', quantity: 1, unit_price: 10 }, { description: 'B', quantity: 1, unit_price: -10.01 }] }, 'items'],
    ['a price past the limit', { items: [{ description: 'A', quantity: 1, unit_price: 1e13 }] }, 'items.0.unit_price'],
    ['an unknown currency', { currency: 'XYZ' }, 'currency'],
    ['a due date on the issue date', { issue_date: '2026-03-01', due_date: '2026-03-01' }, 'due_date'],
    ['a due date before the issue date', { issue_date: '2026-03-01', due_date: '2026-02-01' }, 'due_date'],
    ['a date that is not on the calendar', { due_date: '2026-02-30' }, 'due_date'],
    ['an unknown field', { total: 5 }, 'total'],
    ['a client id of the wrong type', { client_id: '1' }, 'client_id'],
  ])('when posted with %s, then 422 names the field and nothing is created', async (_case, overrides, field) => {
    const t = await ctx.app.tenant();
    const clientId = await aClientId(t);

    const res = await t.api.post('/invoices', anInvoice(clientId, overrides));

    expect(res.status).toBe(422);
    expect(res.body.error).toBe('validation_failed');
    expect(res.body.errors[field]).toEqual([expect.any(String)]);
    expect((await t.api.get('/invoices')).body.meta.total).toBe(0);
    expect(await eventsOf(ctx.app, t.businessId)).toEqual([]);
  });

  test('when the client belongs to another business, then 422 names client_id', async () => {
    const other = await ctx.app.tenant();
    const foreignClient = await aClientId(other);

    const res = await ctx.t.api.post('/invoices', anInvoice(foreignClient));

    expect(res.status).toBe(422);
    expect(res.body.errors.client_id).toEqual([expect.any(String)]);
  });
});

describe('GET /invoices/{id}', () => {
  test('when read, then it carries items and an empty payment history', async () => {
    const draft = await aDraft(ctx.t);

    const res = await ctx.t.api.get(`/invoices/${draft.id}`);

    expect(res.status).toBe(200);
    expect(res.body.invoice).toEqual(draft);
  });

  test('when read by another business or with a live key, then it is 404', async () => {
    const draft = await aDraft(ctx.t);
    const other = await ctx.app.tenant();
    const live = await ctx.app.tenant({ mode: 'live', businessId: ctx.t.businessId });

    expect((await other.api.get(`/invoices/${draft.id}`)).status).toBe(404);
    expect((await live.api.get(`/invoices/${draft.id}`)).status).toBe(404);
  });
});

describe('GET /invoices', () => {
  test('when filtered by status and client, then only matching invoices are listed, with items', async () => {
    const t = await ctx.app.tenant();
    const a = await aDraft(t);
    const b = await aDraft(t);
    await t.api.post(`/invoices/${b.id}/send`);

    const drafts = await t.api.get('/invoices?status=draft');
    const sent = await t.api.get('/invoices?status=sent');
    const ofClient = await t.api.get(`/invoices?client_id=${a.client_id}`);

    expect(drafts.body.data.map((i: any) => i.id)).toEqual([a.id]);
    expect(sent.body.data.map((i: any) => i.id)).toEqual([b.id]);
    expect(ofClient.body.data.map((i: any) => i.id)).toEqual([a.id]);
    expect(drafts.body.data[0].items).toHaveLength(3);
    expect(drafts.body.meta).toEqual({ current_page: 1, per_page: 20, total: 1, last_page: 1, next_after: null });
  });

  test('when paged with after, then later invoices come in id order', async () => {
    const t = await ctx.app.tenant();
    const ids = [];
    for (let i = 0; i < 3; i += 1) ids.push((await aDraft(t)).id);

    const res = await t.api.get(`/invoices?after=${ids[0]}&per_page=1&page=2`);

    expect(res.body.data.map((i: any) => i.id)).toEqual([ids[2]]);
    expect(res.body.meta).toMatchObject({ total: 2, last_page: 2 });
  });

  test.each(['status=unpaid', 'client_id=abc', 'client_id=0'])('when filtered with %s, then it is a 400', async (q) => {
    const res = await ctx.t.api.get(`/invoices?${q}`);

    expect(res.status).toBe(400);
    expect(res.body.error).toBe('bad_request');
  });
});

describe('PATCH /invoices/{id}', () => {
  test('when a draft is patched, then items are replaced and totals recomputed', async () => {
    const draft = await aDraft(ctx.t);

    const res = await ctx.t.api.patch(`/invoices/${draft.id}`, {
      items: [{ description: 'Only line', quantity: 4, unit_price: 12.5 }],
      notes: 'Updated',
      due_date: '2099-06-30',
    });

    expect(res.status).toBe(200);
    expect(res.body.invoice).toMatchObject({ total: 50, amount_due: 50, notes: 'Updated', due_date: '2099-06-30', number: null });
    expect(res.body.invoice.items).toEqual([{ id: expect.any(Number), description: 'Only line', quantity: 4, unit_price: 12.5, amount: 50, amount_excluding_tax: 50, tax_rate_ids: [] }]);
  });

  test('when only the currency changes to one the prices do not fit, then 422 names the prices', async () => {
    const draft = await aDraft(ctx.t, { items: [{ description: 'A', quantity: 1, unit_price: 10.5 }] });

    const res = await ctx.t.api.patch(`/invoices/${draft.id}`, { currency: 'JPY' });

    expect(res.status).toBe(422);
    expect(res.body.errors['items.0.unit_price']).toEqual([expect.any(String)]);
    expect((await ctx.t.api.get(`/invoices/${draft.id}`)).body.invoice.currency).toBe('USD');
  });

  test('when a sent invoice is patched, then it is 422 invalid_state and unchanged', async () => {
    const draft = await aDraft(ctx.t);
    await ctx.t.api.post(`/invoices/${draft.id}/send`);

    const res = await ctx.t.api.patch(`/invoices/${draft.id}`, { notes: 'Too late' });

    expect(res.status).toBe(422);
    expect(res.body.error).toBe('invalid_state');
    expect((await ctx.t.api.get(`/invoices/${draft.id}`)).body.invoice.notes).toBeNull();
  });
});

describe('DELETE /invoices/{id}', () => {
  test('when a draft is deleted, then it is gone', async () => {
    const draft = await aDraft(ctx.t);

    const res = await ctx.t.api.delete(`/invoices/${draft.id}`);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: draft.id, deleted: true });
    expect((await ctx.t.api.get(`/invoices/${draft.id}`)).status).toBe(404);
  });

  test('when a DELETE carries a large JSON body, then the body is ignored rather than refused', async () => {
    const draft = await aDraft(ctx.t);

    const res = await ctx.t.api.request('DELETE', `/invoices/${draft.id}`, { padding: 'x'.repeat(1_100_000) });

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: draft.id, deleted: true });
  });

  test('when a sent invoice is deleted, then it is 422 invalid_state and kept', async () => {
    const draft = await aDraft(ctx.t);
    await ctx.t.api.post(`/invoices/${draft.id}/send`);

    const res = await ctx.t.api.delete(`/invoices/${draft.id}`);

    expect(res.status).toBe(422);
    expect(res.body.error).toBe('invalid_state');
    expect((await ctx.t.api.get(`/invoices/${draft.id}`)).status).toBe(200);
  });

  test('when the client of an invoice is deleted, then it is 422 invalid_state and kept', async () => {
    const draft = await aDraft(ctx.t);

    const res = await ctx.t.api.delete(`/clients/${draft.client_id}`);

    expect(res.status).toBe(422);
    expect(res.body.error).toBe('invalid_state');
    expect((await ctx.t.api.get(`/clients/${draft.client_id}`)).status).toBe(200);
  });
});

describe('POST /invoices/{id}/send', () => {
  test('when drafts are sent, then they are numbered in sequence and the e-mail is suppressed under a test key', async () => {
    const t = await ctx.app.tenant();
    const first = await aDraft(t);
    const second = await aDraft(t);

    const a = await t.api.post(`/invoices/${first.id}/send`);
    const b = await t.api.post(`/invoices/${second.id}/send`);

    expect(a.status).toBe(200);
    expect(a.body.invoice).toMatchObject({ status: 'sent', number: 'INV-000001', sent_at: expect.any(String) });
    expect(b.body.invoice.number).toBe('INV-000002');
    expect(a.body.email).toEqual({ to: expect.stringContaining('@example.com'), status: 'suppressed' });
    const events = await eventsOf(ctx.app, t.businessId);
    expect(events.map((e) => e.type)).toEqual(['invoice.created', 'invoice.created', 'invoice.sent', 'invoice.sent']);
    expect(events[2].data.invoice).toEqual(a.body.invoice);
  });

  test('when a sent invoice is sent again, then it is a reminder: same number, another invoice.sent', async () => {
    const t = await ctx.app.tenant();
    const draft = await aDraft(t);
    await t.api.post(`/invoices/${draft.id}/send`);

    const again = await t.api.post(`/invoices/${draft.id}/send`);

    expect(again.status).toBe(200);
    expect(again.body.invoice.number).toBe('INV-000001');
    expect((await eventsOf(ctx.app, t.businessId)).filter((e) => e.type === 'invoice.sent')).toHaveLength(2);
  });

  test('when each business and mode numbers its invoices, then every sequence starts at 1', async () => {
    const a = await ctx.app.tenant();
    const b = await ctx.app.tenant();
    const aLive = await ctx.app.tenant({ mode: 'live', businessId: a.businessId });
    const [da, db, dl] = [await aDraft(a), await aDraft(b), await aDraft(aLive)];

    const numbers = [
      (await a.api.post(`/invoices/${da.id}/send`)).body.invoice.number,
      (await b.api.post(`/invoices/${db.id}/initiate-payment`)).status,
      (await aLive.api.post(`/invoices/${dl.id}/initiate-payment`)).status,
    ];

    expect(numbers).toEqual(['INV-000001', 200, 200]);
    expect((await b.api.get(`/invoices/${db.id}`)).body.invoice.number).toBe('INV-000001');
    expect((await aLive.api.get(`/invoices/${dl.id}`)).body.invoice).toMatchObject({ number: 'INV-000001', livemode: true });
  });

  test('when a void invoice is sent, then it is 422 invalid_state', async () => {
    const draft = await aDraft(ctx.t);
    await ctx.t.api.post(`/invoices/${draft.id}/void`);

    const res = await ctx.t.api.post(`/invoices/${draft.id}/send`);

    expect(res.status).toBe(422);
    expect(res.body.error).toBe('invalid_state');
  });

  test('when a paid invoice is sent, then it is 422 invalid_state', async () => {
    const draft = await aDraft(ctx.t);
    await ctx.t.api.post(`/invoices/${draft.id}/send`);
    await ctx.t.api.post(`/invoices/${draft.id}/simulate-payment`);

    const res = await ctx.t.api.post(`/invoices/${draft.id}/send`);

    expect(res.status).toBe(422);
    expect(res.body.error).toBe('invalid_state');
  });

  test('when send is given a body field, then it is 422', async () => {
    const draft = await aDraft(ctx.t);

    const res = await ctx.t.api.post(`/invoices/${draft.id}/send`, { to: 'someone@example.com' });

    expect(res.status).toBe(422);
    expect(res.body.errors.to).toEqual([expect.any(String)]);
  });
});

describe('POST /invoices/{id}/initiate-payment', () => {
  test('when a draft is given a payment link, then it is issued without e-mail or invoice.sent', async () => {
    const t = await ctx.app.tenant();
    const draft = await aDraft(t);

    const res = await t.api.post(`/invoices/${draft.id}/initiate-payment`);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ invoice_id: draft.id, payment_url: expect.stringMatching(/^https:\/\/pay\.example\.com\/pay\/[A-Za-z0-9_-]{43}$/) });
    expect((await t.api.get(`/invoices/${draft.id}`)).body.invoice).toMatchObject({ status: 'sent', number: 'INV-000001' });
    expect((await eventsOf(ctx.app, t.businessId)).map((e) => e.type)).toEqual(['invoice.created']);
  });

  test('when asked twice, then the link is the same', async () => {
    const draft = await aDraft(ctx.t);

    const a = await ctx.t.api.post(`/invoices/${draft.id}/initiate-payment`);
    const b = await ctx.t.api.post(`/invoices/${draft.id}/initiate-payment`);

    expect(b.body.payment_url).toBe(a.body.payment_url);
  });

  test('when the key holds payments:write only, then it may initiate; invoices:read only gets 403 naming invoices:write', async () => {
    const draft = await aDraft(ctx.t);
    const payer = await ctx.app.tenant({ businessId: ctx.t.businessId, scopes: ['payments:write'] });
    const reader = await ctx.app.tenant({ businessId: ctx.t.businessId, scopes: ['invoices:read'] });

    const allowed = await payer.api.post(`/invoices/${draft.id}/initiate-payment`);
    const refused = await reader.api.post(`/invoices/${draft.id}/initiate-payment`);

    expect(allowed.status).toBe(200);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: 'forbidden', required_scope: 'invoices:write', key_scopes: ['invoices:read'] });
  });

  test('when the invoice is void, then it is 422 invalid_state', async () => {
    const draft = await aDraft(ctx.t);
    await ctx.t.api.post(`/invoices/${draft.id}/void`);

    const res = await ctx.t.api.post(`/invoices/${draft.id}/initiate-payment`);

    expect(res.status).toBe(422);
    expect(res.body.error).toBe('invalid_state');
  });
});

describe('POST /invoices/{id}/simulate-payment', () => {
  async function aSentInvoice(t: Tenant, overrides: Record<string, unknown> = {}) {
    const draft = await aDraft(t, overrides);
    await t.api.post(`/invoices/${draft.id}/send`);
    return draft;
  }

  test('when the amount due is paid, then the invoice is paid and payment.received and invoice.paid are in the outbox', async () => {
    const t = await ctx.app.tenant();
    const invoice = await aSentInvoice(t);

    const res = await t.api.post(`/invoices/${invoice.id}/simulate-payment`);

    expect(res.status).toBe(201);
    expect(res.body.payment).toMatchObject({
      invoice_id: invoice.id,
      client_id: invoice.client_id,
      amount: 150,
      currency: 'USD',
      status: 'succeeded',
      method: 'simulated',
      livemode: false,
      paid_at: expect.any(String),
    });
    expect(res.body.invoice).toMatchObject({ status: 'paid', amount_paid: 150, amount_due: 0, paid_at: expect.any(String) });
    expect(res.body.invoice.payments).toEqual([res.body.payment]);
    const events = await eventsOf(ctx.app, t.businessId);
    expect(events.map((e) => e.type)).toEqual(['invoice.created', 'invoice.sent', 'payment.received', 'invoice.paid']);
    expect(events[2].data).toEqual({ payment: res.body.payment, invoice: res.body.invoice });
    expect(events[3].data).toEqual({ invoice: res.body.invoice });
  });

  test('when part is paid, then the invoice is partial and only payment.received fires', async () => {
    const t = await ctx.app.tenant();
    const invoice = await aSentInvoice(t);

    const res = await t.api.post(`/invoices/${invoice.id}/simulate-payment`, { amount: 40.25 });

    expect(res.body.invoice).toMatchObject({ status: 'partial', amount_paid: 40.25, amount_due: 109.75, paid_at: null });
    expect((await t.api.get(`/invoices/${invoice.id}/payment-status`)).body).toEqual({
      invoice_id: invoice.id,
      status: 'partial',
      currency: 'USD',
      total: 150,
      amount_paid: 40.25,
      amount_due: 109.75,
      overdue: false,
    });
    expect((await eventsOf(ctx.app, t.businessId)).map((e) => e.type)).not.toContain('invoice.paid');
  });

  test.each([
    ['more than the amount due', { amount: 150.01 }],
    ['a 3-decimal USD amount', { amount: 1.005 }],
    ['a zero amount', { amount: 0 }],
    ['an amount given as a string', { amount: '10' }],
  ])('when paying %s, then 422 names amount and nothing is recorded', async (_case, input) => {
    const invoice = await aSentInvoice(ctx.t);

    const res = await ctx.t.api.post(`/invoices/${invoice.id}/simulate-payment`, input);

    expect(res.status).toBe(422);
    expect(res.body.errors.amount).toEqual([expect.any(String)]);
    expect((await ctx.t.api.get(`/invoices/${invoice.id}`)).body.invoice).toMatchObject({ status: 'sent', amount_paid: 0, payments: [] });
  });

  test.each([
    ['a draft', (id: number) => Promise.resolve(id)],
    ['a void invoice', async (id: number) => (await ctx.t.api.post(`/invoices/${id}/void`), id)],
    [
      'a paid invoice',
      async (id: number) => {
        await ctx.t.api.post(`/invoices/${id}/send`);
        await ctx.t.api.post(`/invoices/${id}/simulate-payment`);
        return id;
      },
    ],
  ])('when %s is paid, then it is 422 invalid_state', async (_case, prepare) => {
    const id = await prepare((await aDraft(ctx.t)).id);

    const res = await ctx.t.api.post(`/invoices/${id}/simulate-payment`, { amount: 1 });

    expect(res.status).toBe(422);
    expect(res.body.error).toBe('invalid_state');
  });

  test('when a live key simulates, then it is 403 test_mode_only', async () => {
    const live = await ctx.app.tenant({ mode: 'live' });
    const draft = await aDraft(live);
    await live.api.post(`/invoices/${draft.id}/initiate-payment`);

    const res = await live.api.post(`/invoices/${draft.id}/simulate-payment`);

    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'test_mode_only', message: expect.any(String) });
    expect((await live.api.get(`/invoices/${draft.id}`)).body.invoice.amount_paid).toBe(0);
  });

  test('when 20 payments of 1.00 race on an invoice of 20.00, then exactly 20.00 is paid', async () => {
    const t = await ctx.app.tenant();
    const invoice = await aSentInvoice(t, { items: [{ description: 'Twenty', quantity: 20, unit_price: 1 }] });

    const results = await Promise.all(
      Array.from({ length: 20 }, () => t.api.post(`/invoices/${invoice.id}/simulate-payment`, { amount: 1 })),
    );

    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
    const read = await t.api.get(`/invoices/${invoice.id}`);
    expect(read.body.invoice).toMatchObject({ status: 'paid', amount_paid: 20, amount_due: 0 });
    expect(read.body.invoice.payments).toHaveLength(20);
    expect((await eventsOf(ctx.app, t.businessId)).filter((e) => e.type === 'invoice.paid')).toHaveLength(1);
  });

  test('when 25 payments of 1.00 race on an invoice of 20.00, then 20 succeed and 5 are refused', async () => {
    const t = await ctx.app.tenant();
    const invoice = await aSentInvoice(t, { items: [{ description: 'Twenty', quantity: 20, unit_price: 1 }] });

    const results = await Promise.all(
      Array.from({ length: 25 }, () => t.api.post(`/invoices/${invoice.id}/simulate-payment`, { amount: 1 })),
    );

    expect(results.filter((r) => r.status === 201)).toHaveLength(20);
    expect(results.filter((r) => r.status === 422)).toHaveLength(5);
    expect((await t.api.get(`/invoices/${invoice.id}`)).body.invoice.amount_paid).toBe(20);
  });
});

describe('POST /invoices/{id}/void', () => {
  test('when a draft is voided, then it takes the next number so the sequence has no gap', async () => {
    const t = await ctx.app.tenant();
    const draft = await aDraft(t);

    const res = await t.api.post(`/invoices/${draft.id}/void`);

    expect(res.status).toBe(200);
    expect(res.body.invoice).toMatchObject({ status: 'void', number: 'INV-000001', voided_at: expect.any(String) });
  });

  test('when a partly paid invoice is voided, then it is 422 invalid_state and keeps its payment', async () => {
    const t = await ctx.app.tenant();
    const draft = await aDraft(t);
    await t.api.post(`/invoices/${draft.id}/send`);
    await t.api.post(`/invoices/${draft.id}/simulate-payment`, { amount: 10 });

    const res = await t.api.post(`/invoices/${draft.id}/void`);

    expect(res.status).toBe(422);
    expect(res.body.error).toBe('invalid_state');
    expect((await t.api.get(`/invoices/${draft.id}`)).body.invoice).toMatchObject({ status: 'partial', amount_paid: 10, voided_at: null });
  });

  test('when a paid or void invoice is voided, then it is 422 invalid_state', async () => {
    const draft = await aDraft(ctx.t);
    await ctx.t.api.post(`/invoices/${draft.id}/send`);
    await ctx.t.api.post(`/invoices/${draft.id}/simulate-payment`);
    const other = await aDraft(ctx.t);
    await ctx.t.api.post(`/invoices/${other.id}/void`);

    expect((await ctx.t.api.post(`/invoices/${draft.id}/void`)).body.error).toBe('invalid_state');
    expect((await ctx.t.api.post(`/invoices/${other.id}/void`)).body.error).toBe('invalid_state');
  });
});

describe('payment_url', () => {
  test('when an invoice is a draft, then it has no payment_url; once sent, every read and event shows its payment page', async () => {
    const t = await ctx.app.tenant(); // its own key: this file's shared one is near its rate limit
    const draft = await aDraft(t);

    const sent = await t.api.post(`/invoices/${draft.id}/send`);
    const read = await t.api.get(`/invoices/${draft.id}`);
    const listed = await t.api.get(`/invoices?status=sent&per_page=100`);
    const initiated = await t.api.post(`/invoices/${draft.id}/initiate-payment`);
    const events = await eventsOf(ctx.app, t.businessId);

    expect(initiated.status).toBe(200);
    expect(draft.payment_url).toBeNull();
    expect(sent.body.invoice.payment_url).toMatch(/^https:\/\/pay\.example\.com\/pay\/[A-Za-z0-9_-]{43}$/);
    expect(read.body.invoice.payment_url).toBe(initiated.body.payment_url);
    expect(listed.body.data.find((i: { id: number }) => i.id === draft.id).payment_url).toBe(initiated.body.payment_url);
    expect(events.filter((e) => e.type === 'invoice.sent').at(-1)?.data).toEqual({ invoice: expect.objectContaining({ payment_url: initiated.body.payment_url }) });
  });
});
