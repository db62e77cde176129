/** Metadata on clients, invoices, payments and contracts (the contract's "Metadata"): set, merged, filtered, indexed. */
import { aClient, aDraft, useApp } from '../support/app';

const ctx = useApp();

const q = (pairs: Record<string, string>) =>
  Object.entries(pairs)
    .map(([key, value]) => `metadata[${encodeURIComponent(key)}]=${encodeURIComponent(value)}`)
    .join('&');

describe('metadata on create and update', () => {
  test('when a client is created without metadata, then it shows {}; with metadata, then it shows it, without keys given empty', async () => {
    const bare = await ctx.t.api.post('/clients', aClient());
    const tagged = await ctx.t.api.post('/clients', aClient({ metadata: { crm_id: 'C-17', tier: 'gold', unset: '', gone: null } }));

    expect(bare.body.client.metadata).toEqual({});
    expect(tagged.status).toBe(201);
    expect(tagged.body.client.metadata).toEqual({ crm_id: 'C-17', tier: 'gold' });
    expect((await ctx.t.api.get(`/clients/${tagged.body.client.id}`)).body.client.metadata).toEqual({ crm_id: 'C-17', tier: 'gold' });
  });

  test('when metadata is patched, then it is merged, and a key set to "" or null is removed', async () => {
    const client = (await ctx.t.api.post('/clients', aClient({ metadata: { a: '1', b: '2', c: '3' } }))).body.client;

    const res = await ctx.t.api.patch(`/clients/${client.id}`, { metadata: { a: 'one', b: '', c: null, d: '4' } });

    expect(res.status).toBe(200);
    expect(res.body.client.metadata).toEqual({ a: 'one', d: '4' });
    expect((await ctx.t.api.get(`/clients?${q({ b: '2' })}`)).body.data).toEqual([]);
    expect((await ctx.t.api.get(`/clients?${q({ d: '4' })}`)).body.data.map((c: any) => c.id)).toEqual([client.id]);
  });

  test('when an issued invoice gets metadata, then only the metadata changes; its other fields stay refused', async () => {
    const invoice = await aDraft(ctx.t, { metadata: { order_id: '1042' } });
    await ctx.t.api.post(`/invoices/${invoice.id}/initiate-payment`);

    const tagged = await ctx.t.api.patch(`/invoices/${invoice.id}`, { metadata: { shipped: 'yes' } });
    const refused = await ctx.t.api.patch(`/invoices/${invoice.id}`, { notes: 'changed', metadata: { shipped: 'no' } });

    expect(tagged.status).toBe(200);
    expect(tagged.body.invoice.metadata).toEqual({ order_id: '1042', shipped: 'yes' });
    expect(refused.status).toBe(422);
    expect((await ctx.t.api.get(`/invoices/${invoice.id}`)).body.invoice.metadata).toEqual({ order_id: '1042', shipped: 'yes' });
  });

  test('when a payment is received elsewhere with metadata, then the payment carries it, can be read, patched and found by it', async () => {
    const invoice = await aDraft(ctx.t);
    await ctx.t.api.post(`/invoices/${invoice.id}/initiate-payment`);

    const paid = await ctx.t.api.post(`/invoices/${invoice.id}/payments`, { method: 'card', metadata: { till: '3' } });
    const payment = paid.body.payment;
    const patched = await ctx.t.api.patch(`/payments/${payment.id}`, { metadata: { receipt: 'R-9' } });

    expect(payment.metadata).toEqual({ till: '3' });
    expect(patched.body.payment.metadata).toEqual({ till: '3', receipt: 'R-9' });
    expect((await ctx.t.api.get(`/payments/${payment.id}`)).body.payment.metadata).toEqual({ till: '3', receipt: 'R-9' });
    expect((await ctx.t.api.get(`/payments?${q({ receipt: 'R-9' })}`)).body.data.map((p: any) => p.id)).toEqual([payment.id]);
    expect((await ctx.t.api.get(`/invoices/${invoice.id}`)).body.invoice.payments[0].metadata).toEqual({ till: '3', receipt: 'R-9' });
  });

  test('when a contract is created with metadata and patched, then the metadata is merged and the text is not changeable', async () => {
    const client = (await ctx.t.api.post('/clients', aClient())).body.client;
    const contract = (await ctx.t.api.post('/contracts', { title: 'Retainer', client_id: client.id, body: 'Terms.', metadata: { deal: 'D-1' } })).body.contract;

    const patched = await ctx.t.api.patch(`/contracts/${contract.id}`, { metadata: { stage: 'sent' } });
    const refused = await ctx.t.api.patch(`/contracts/${contract.id}`, { body: 'Other terms.' });

    expect(contract.metadata).toEqual({ deal: 'D-1' });
    expect(patched.body.contract.metadata).toEqual({ deal: 'D-1', stage: 'sent' });
    expect(refused.status).toBe(422);
    expect((await ctx.t.api.get(`/contracts?${q({ deal: 'D-1', stage: 'sent' })}`)).body.data.map((c: any) => c.id)).toEqual([contract.id]);
  });
});

describe('metadata limits', () => {
  const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, 'v']));

  test.each([
    ['a key of 41 characters', { ['k'.repeat(41)]: 'v' }],
    ['an empty key', { '': 'v' }],
    ['a key with a bracket', { 'a[b]': 'v' }],
    ['a value of 501 characters', { a: 'v'.repeat(501) }],
    ['a number as a value', { a: 1 }],
    ['51 keys', { ...fifty, k50: 'v' }],
  ])('when metadata has %s, then 422 names metadata and nothing is created', async (_case, metadata) => {
    const before = (await ctx.t.api.get('/clients')).body.meta.total;

    const res = await ctx.t.api.post('/clients', aClient({ metadata }));

    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors).every((field) => field.startsWith('metadata'))).toBe(true);
    expect((await ctx.t.api.get('/clients')).body.meta.total).toBe(before);
  });

  test('when 50 keys, 40-character keys and 500-character values are given, then they are kept exactly', async () => {
    const edge = { ...fifty, k0: 'é'.repeat(500) };
    delete (edge as Record<string, string>).k49;
    (edge as Record<string, string>)['x'.repeat(40)] = ' padded ';

    const res = await ctx.t.api.post('/clients', aClient({ metadata: edge }));

    expect(res.status).toBe(201);
    expect(res.body.client.metadata).toEqual(edge);
  });

  test('when a patch would take metadata past 50 keys, then 422 and the metadata is unchanged', async () => {
    const client = (await ctx.t.api.post('/clients', aClient({ metadata: fifty }))).body.client;

    const res = await ctx.t.api.patch(`/clients/${client.id}`, { metadata: { one_more: 'v' } });

    expect(res.status).toBe(422);
    expect(res.body.errors.metadata[0]).toMatch(/at most 50 keys/);
    expect((await ctx.t.api.get(`/clients/${client.id}`)).body.client.metadata).toEqual(fifty);
  });
});

describe('the list filter', () => {
  test('when several metadata filters are given, then only records with every pair are listed, matched exactly', async () => {
    const store = `shop-${Date.now()}`;
    const a = await aDraft(ctx.t, { metadata: { store, order_id: '1' } });
    const b = await aDraft(ctx.t, { metadata: { store, order_id: '2' } });
    const c = await aDraft(ctx.t, { metadata: { store: `${store} `, order_id: '1' } });

    const both = await ctx.t.api.get(`/invoices?${q({ store, order_id: '1' })}`);
    const one = await ctx.t.api.get(`/invoices?${q({ store })}`);
    const padded = await ctx.t.api.get(`/invoices?${q({ store: `${store} ` })}`);
    const upper = await ctx.t.api.get(`/invoices?${q({ store: store.toUpperCase() })}`);

    expect(both.body.data.map((i: any) => i.id)).toEqual([a.id]);
    expect(one.body.data.map((i: any) => i.id)).toEqual([a.id, b.id]);
    expect(one.body.meta.total).toBe(2);
    expect(padded.body.data.map((i: any) => i.id)).toEqual([c.id]);
    expect(upper.body.data).toEqual([]);
  });

  test('when another business has the same metadata, then its records are not listed', async () => {
    const other = await ctx.app.tenant();
    const mine = await aDraft(ctx.t, { metadata: { shared_key: 'same' } });
    await aDraft(other, { metadata: { shared_key: 'same' } });

    const res = await ctx.t.api.get(`/invoices?${q({ shared_key: 'same' })}`);

    expect(res.body.data.map((i: any) => i.id)).toEqual([mine.id]);
  });

  test('when a deleted draft had metadata, then it is no longer found by it', async () => {
    const draft = await aDraft(ctx.t, { metadata: { temp: 'yes' } });

    await ctx.t.api.delete(`/invoices/${draft.id}`);

    expect((await ctx.t.api.get(`/invoices?${q({ temp: 'yes' })}`)).body.data).toEqual([]);
  });

  test.each([
    ['metadata=x', 'metadata=x'],
    ['a nested key', 'metadata[a][b]=x'],
    ['a key of 41 characters', `metadata[${'k'.repeat(41)}]=x`],
    ['an empty value', 'metadata[a]='],
    ['an empty key', 'metadata[]=x'],
  ])('when the filter has %s, then 400, never every record', async (_case, query) => {
    const res = await ctx.t.api.get(`/invoices?${query}`);

    expect(res.status).toBe(400);
    expect(res.body.error).toBe('bad_request');
  });

  test('when the filter is looked up on MariaDB, then it uses the metadata index', async () => {
    if (!ctx.app.databaseUrl.startsWith('mysql')) return;
    const plan = await ctx.app.db.knex.raw(
      "explain select object_id from metadata_entries where business_id = ? and livemode = 0 and object_type = 'invoice' and `key` = 'a' and value = 'b'",
      [ctx.t.businessId],
    );
    expect(plan[0][0]).toMatchObject({ key: 'metadata_entries_lookup' });
  });
});
