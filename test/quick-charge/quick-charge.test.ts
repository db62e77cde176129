import { aClient, eventsOf, useApp } from '../support/app';
import { dottedCapitalIEmail } from '../support/emails';

const ctx = useApp({ baseUrl: 'https://pay.example.com' });

describe('POST /quick-charge', () => {
  test('when charged for a new client, then the client is created and an issued invoice with a payment link is returned', async () => {
    const t = await ctx.app.tenant();
    const client = aClient({ company: 'Acme' });

    const res = await t.api.post('/quick-charge', { amount: 49.99, currency: 'USD', description: 'Consultation', client });

    expect(res.status).toBe(201);
    expect(res.body.client).toMatchObject({ ...client, id: expect.any(Number), livemode: false });
    expect(res.body.invoice).toMatchObject({
      client_id: res.body.client.id,
      status: 'sent',
      number: 'INV-000001',
      currency: 'USD',
      total: 49.99,
      amount_due: 49.99,
      items: [{ id: expect.any(Number), description: 'Consultation', quantity: 1, unit_price: 49.99, amount: 49.99 }],
    });
    expect(res.body.payment_url).toMatch(/^https:\/\/pay\.example\.com\/pay\/[A-Za-z0-9_-]{43}$/);
    expect((await eventsOf(ctx.app, t.businessId)).map((e) => e.type)).toEqual(['invoice.created']);
  });

  test('when the client e-mail already exists (in another case), then that client is reused', async () => {
    const t = await ctx.app.tenant();
    const existing = (await t.api.post('/clients', aClient({ email: 'Jane.Doe@Example.com' }))).body.client;

    const res = await t.api.post('/quick-charge', { amount: 10, client: { name: 'Someone Else', email: 'jane.doe@example.com' } });

    expect(res.status).toBe(201);
    expect(res.body.client).toEqual(existing);
    expect((await t.api.get('/clients')).body.meta.total).toBe(1);
  });

  test('when the client e-mail is internationalised, then it is accepted and shown as given', async () => {
    const t = await ctx.app.tenant();

    const res = await t.api.post('/quick-charge', { amount: 1, client: { name: 'José', email: 'josé@exämple.com' } });

    expect(res.status).toBe(201);
    expect(res.body.client.email).toBe('josé@exämple.com');
  });

  test('when the client e-mail grows when lower-cased (152 characters of İ), then the client is created and found again ignoring case', async () => {
    const t = await ctx.app.tenant();

    const first = await t.api.post('/quick-charge', { amount: 1, client: { name: 'İlkay', email: dottedCapitalIEmail('COM') } });
    const second = await t.api.post('/quick-charge', { amount: 2, client: { name: 'İlkay', email: dottedCapitalIEmail('com') } });

    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body.client).toEqual(first.body.client);
  });

  test('when given client_id, then that client is charged in the business currency', async () => {
    const t = await ctx.app.tenant({ currency: 'JPY' });
    const existing = (await t.api.post('/clients', aClient())).body.client;

    const res = await t.api.post('/quick-charge', { amount: 5000, client_id: existing.id });

    expect(res.status).toBe(201);
    expect(res.body.invoice).toMatchObject({ client_id: existing.id, currency: 'JPY', total: 5000 });
    expect(res.body.invoice.items[0].description).toBe('Payment');
  });

  test('when the amount does not fit the currency, then 422 and neither the client nor an invoice is left behind', async () => {
    const t = await ctx.app.tenant();

    const res = await t.api.post('/quick-charge', { amount: 10.005, currency: 'USD', client: aClient() });

    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ amount: [expect.any(String)] });
    expect((await t.api.get('/clients')).body.meta.total).toBe(0);
    expect((await t.api.get('/invoices')).body.meta.total).toBe(0);
    expect(await eventsOf(ctx.app, t.businessId)).toEqual([]);
  });

  test.each([
    ['neither client nor client_id', { amount: 10 }, 'client_id'],
    ['both client and client_id', { amount: 10, client_id: 1, client: { name: 'A', email: 'a@example.com' } }, 'client_id'],
    ['a zero amount', { amount: 0, client: { name: 'A', email: 'a@example.com' } }, 'amount'],
    ['a client without an e-mail', { amount: 10, client: { name: 'A' } }, 'client.email'],
    ['a client_id of another business', { amount: 10, client_id: 999999 }, 'client_id'],
  ])('when charged with %s, then 422 names the field', async (_case, input, field) => {
    const res = await ctx.t.api.post('/quick-charge', input);

    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toContain(field);
  });

  test('when retried with the same Idempotency-Key, then one invoice exists and the response is replayed', async () => {
    const t = await ctx.app.tenant();
    const body = { amount: 25, client: aClient() };
    const headers = { 'idempotency-key': '0f8fad5b-d9cb-469f-a165-70867728950e' };

    const first = await t.api.post('/quick-charge', body, { headers });
    const retry = await t.api.post('/quick-charge', body, { headers });

    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect((await t.api.get('/invoices')).body.meta.total).toBe(1);
  });

  test('when ten quick-charges race for one new e-mail, then one client is created and every charge succeeds', async () => {
    const t = await ctx.app.tenant();
    const client = aClient();

    const results = await Promise.all(Array.from({ length: 10 }, () => t.api.post('/quick-charge', { amount: 1, client })));

    expect(results.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(new Set(results.map((r) => r.body.client.id)).size).toBe(1);
    const numbers = results.map((r) => r.body.invoice.number).sort();
    expect(numbers).toEqual(Array.from({ length: 10 }, (_, i) => `INV-${String(i + 1).padStart(6, '0')}`));
  });
});

describe('POST /quick-charge with items (an order in one call)', () => {
  const order = {
    currency: 'EUR',
    issue_date: '2026-11-20',
    items: [
      { description: 'Mug', quantity: 2, unit_price: 12.5 },
      { description: 'Shipping', quantity: 1, unit_price: 4.9 },
    ],
    notes: 'Order #1042',
    metadata: { wc_store: 'https://shop.example', wc_order_id: '1042' },
  };

  test('when items, notes, metadata and a new client with metadata are given, then one issued invoice carries them all', async () => {
    const t = await ctx.app.tenant();

    const res = await t.api.post('/quick-charge', { ...order, client: aClient({ metadata: { wc_customer_id: '7' } }) });

    expect(res.status).toBe(201);
    expect(res.body.invoice).toMatchObject({ status: 'sent', total: 29.9, issue_date: '2026-11-20', notes: 'Order #1042', metadata: order.metadata });
    expect(res.body.invoice.items.map((i: any) => i.description)).toEqual(['Mug', 'Shipping']);
    expect(res.body.client.metadata).toEqual({ wc_customer_id: '7' });
  });

  test('when the client already exists, then it is reused unchanged, its metadata included', async () => {
    const t = await ctx.app.tenant();
    const existing = (await t.api.post('/clients', aClient({ metadata: { crm: 'x' } }))).body.client;

    const res = await t.api.post('/quick-charge', { ...order, client: { name: 'Other', email: existing.email, metadata: { wc_customer_id: '7' } } });

    expect(res.body.client).toEqual(existing);
  });

  test.each([
    ['both amount and items', { amount: 5 }, 'amount', /not both/],
    ['neither amount nor items', { items: undefined }, 'amount', /give amount or items/],
    ['a description beside items', { description: 'One line' }, 'description', /goes with amount/],
  ])('when the body has %s, then 422 names the field', async (_case, change, field, message) => {
    const t = await ctx.app.tenant();

    const res = await t.api.post('/quick-charge', { ...order, ...change, client: aClient() });

    expect(res.status).toBe(422);
    expect(res.body.errors[field][0]).toMatch(message);
  });
});
