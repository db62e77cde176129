/**
 * Taxes on invoices over HTTP (contract, "Tax" and "Legal identity"): rates on lines and as
 * defaults, the arithmetic once per rate, inclusive prices and their rounding, tax computed
 * elsewhere, the buyer's tax status, archived and renamed rates, and the parties' snapshot.
 * Every expected figure is worked out by hand in the comment beside it.
 */
import { aClient, anInvoice, eventsOf, Tenant, useApp } from '../support/app';

const ctx = useApp({ rateLimitPerMinute: 100_000 });

async function aRate(t: Tenant, body: Record<string, unknown>): Promise<number> {
  const res = await t.api.post('/tax-rates', { display_name: 'VAT', ...body });
  if (res.status !== 201) throw new Error(`could not create a tax rate: ${res.status} ${res.text}`);
  return res.body.tax_rate.id;
}

async function aClientId(t: Tenant, overrides: Record<string, unknown> = {}): Promise<number> {
  const res = await t.api.post('/clients', aClient(overrides));
  if (res.status !== 201) throw new Error(`could not create a client: ${res.status} ${res.text}`);
  return res.body.client.id;
}

const line = (description: string, unit_price: number, extra: Record<string, unknown> = {}) => ({ description, quantity: 1, unit_price, ...extra });

describe('POST /invoices with tax rates', () => {
  test('when three lines share a 19 % rate, then the tax is rounded once for the rate, not per line', async () => {
    const t = ctx.t;
    const vat = await aRate(t, { percentage: 19 });
    const clientId = await aClientId(t);

    // Per line 1.25 × 19 % = 0.2375 → 0.24, three times 0.72; once for the rate 3.75 × 19 % = 0.7125 → 0.71.
    const res = await t.api.post('/invoices', anInvoice(clientId, { items: [line('A', 1.25), line('B', 1.25), line('C', 1.25)], default_tax_rate_ids: [vat] }));

    expect(res.status).toBe(201);
    expect(res.body.invoice).toMatchObject({ subtotal: 3.75, total_excluding_tax: 3.75, total_tax: 0.71, rounding_amount: 0, total: 4.46, amount_due: 4.46, tax_exempt: 'none' });
    expect(res.body.invoice.tax_breakdown).toEqual([
      { tax_rate_id: vat, display_name: 'VAT', category: 'S', percentage: 19, inclusive: false, taxable_amount: 3.75, tax_amount: 0.71, exemption_reason: null },
    ]);
    expect(res.body.invoice.items.map((item: { tax_rate_ids: number[] }) => item.tax_rate_ids)).toEqual([[vat], [vat], [vat]]);
  });

  test("when lines carry 7 % and 19 %, then each rate has its breakdown line and an item's own rates replace the defaults", async () => {
    const t = ctx.t;
    const reduced = await aRate(t, { display_name: 'VAT reduced', percentage: 7 });
    const standard = await aRate(t, { display_name: 'VAT standard', percentage: 19 });
    const clientId = await aClientId(t);

    // Book 20.00 × 7 % = 1.40; service 100.00 × 19 % = 19.00; total 120.00 + 20.40 = 140.40.
    const res = await t.api.post('/invoices', anInvoice(clientId, { items: [line('Book', 20, { tax_rate_ids: [reduced] }), line('Service', 100)], default_tax_rate_ids: [standard] }));

    expect(res.status).toBe(201);
    expect(res.body.invoice).toMatchObject({ total_excluding_tax: 120, total_tax: 20.4, total: 140.4, default_tax_rate_ids: [standard] });
    expect(res.body.invoice.tax_breakdown.map((entry: Record<string, unknown>) => [entry.tax_rate_id, entry.taxable_amount, entry.tax_amount])).toEqual([
      [reduced, 20, 1.4],
      [standard, 100, 19],
    ]);
  });

  test('when prices include 19 %, then each line drops its tax and the rounding keeps the quoted total', async () => {
    const t = ctx.t;
    const vat = await aRate(t, { percentage: 19, inclusive: true });
    const clientId = await aClientId(t);

    // Each 9.99 line: 999 × 100 / 119 = 839.496 → 8.39 excluding tax. Taxable 25.17; tax 25.17 × 19 % = 4.7823 → 4.78.
    // 25.17 + 4.78 = 29.95, the lines sum to 29.97: rounding 0.02, so the total is what was quoted.
    const res = await t.api.post('/invoices', anInvoice(clientId, { items: [line('A', 9.99), line('B', 9.99), line('C', 9.99)], default_tax_rate_ids: [vat] }));

    expect(res.status).toBe(201);
    expect(res.body.invoice).toMatchObject({ subtotal: 29.97, total_excluding_tax: 25.17, total_tax: 4.78, rounding_amount: 0.02, total: 29.97 });
    expect(res.body.invoice.items.map((item: { amount: number; amount_excluding_tax: number }) => [item.amount, item.amount_excluding_tax])).toEqual([
      [9.99, 8.39],
      [9.99, 8.39],
      [9.99, 8.39],
    ]);
  });

  test('when a state and a county rate stack on the same lines, then each taxes the same amount', async () => {
    const t = ctx.t;
    const state = await aRate(t, { display_name: 'State', percentage: 6.25 });
    const county = await aRate(t, { display_name: 'County', percentage: 2.25 });
    const clientId = await aClientId(t);

    // Taxable 119.99: state 7.499375 → 7.50, county 2.699775 → 2.70; total 119.99 + 10.20 = 130.19.
    const res = await t.api.post('/invoices', anInvoice(clientId, { items: [line('Chair', 100), line('Lamp', 19.99)], default_tax_rate_ids: [state, county] }));

    expect(res.body.invoice).toMatchObject({ total_excluding_tax: 119.99, total_tax: 10.2, total: 130.19 });
    expect(res.body.invoice.tax_breakdown.map((entry: Record<string, unknown>) => entry.tax_amount)).toEqual([7.5, 2.7]);
  });

  test('when the currency has no decimals or three, then the tax is rounded to its minor unit', async () => {
    const t = ctx.t;
    const consumption = await aRate(t, { display_name: 'Consumption tax', percentage: 10 });
    const kuwait = await aRate(t, { display_name: 'VAT', percentage: 5 });
    const clientId = await aClientId(t);

    // 1,234 yen × 10 % = 123.4 → 123 yen.
    const yen = await t.api.post('/invoices', anInvoice(clientId, { currency: 'JPY', items: [line('Tea', 1234)], default_tax_rate_ids: [consumption] }));
    // 1.234 KWD × 5 % = 0.0617 → 0.062 KWD.
    const dinar = await t.api.post('/invoices', anInvoice(clientId, { currency: 'KWD', items: [line('Tea', 1.234)], default_tax_rate_ids: [kuwait] }));

    expect(yen.body.invoice).toMatchObject({ total_tax: 123, total: 1357 });
    expect(dinar.body.invoice).toMatchObject({ total_tax: 0.062, total: 1.296 });
  });

  test('when a discount line carries the rate, then it lowers the taxable amount', async () => {
    const t = ctx.t;
    const vat = await aRate(t, { percentage: 19 });
    const clientId = await aClientId(t);

    // 100.00 − 10.00 = 90.00 taxable; 90.00 × 19 % = 17.10.
    const res = await t.api.post('/invoices', anInvoice(clientId, { items: [line('Work', 100), line('Discount', -10)], default_tax_rate_ids: [vat] }));

    expect(res.body.invoice).toMatchObject({ subtotal: 90, total_tax: 17.1, total: 107.1 });
  });

  test('when no rate applies, then total_tax is 0 and the total is the subtotal', async () => {
    const clientId = await aClientId(ctx.t);

    const res = await ctx.t.api.post('/invoices', anInvoice(clientId));

    expect(res.body.invoice).toMatchObject({ subtotal: 150, total_excluding_tax: 150, total_tax: 0, rounding_amount: 0, total: 150, tax_breakdown: [] });
  });
});

describe("The buyer's tax status", () => {
  test('when the client is reverse-charge, then every rate applies as AE at 0 % with its reason and no tax', async () => {
    const t = ctx.t;
    const vat = await aRate(t, { percentage: 19 });
    const clientId = await aClientId(t, { tax_exempt: 'reverse', country: 'FR', tax_id: 'FR12345678901' });

    const res = await t.api.post('/invoices', anInvoice(clientId, { items: [line('Consulting', 1000)], default_tax_rate_ids: [vat] }));

    expect(res.body.invoice).toMatchObject({ tax_exempt: 'reverse', total_tax: 0, total: 1000 });
    expect(res.body.invoice.tax_breakdown).toEqual([
      { tax_rate_id: vat, display_name: 'VAT', category: 'AE', percentage: 0, inclusive: false, taxable_amount: 1000, tax_amount: 0, exemption_reason: 'Reverse charge' },
    ]);
  });

  test("when the invoice says exempt, then it overrides the client's status, and an inclusive price does not drop", async () => {
    const t = ctx.t;
    const vat = await aRate(t, { percentage: 19, inclusive: true });
    const clientId = await aClientId(t);

    const res = await t.api.post('/invoices', anInvoice(clientId, { items: [line('Book', 11.9)], default_tax_rate_ids: [vat], tax_exempt: 'exempt' }));

    expect(res.body.invoice).toMatchObject({ tax_exempt: 'exempt', total_excluding_tax: 11.9, total_tax: 0, rounding_amount: 0, total: 11.9 });
    expect(res.body.invoice.items[0].amount_excluding_tax).toBe(11.9);
    expect(res.body.invoice.tax_breakdown[0]).toMatchObject({ category: 'E', percentage: 0, exemption_reason: 'Exempt' });
  });

  test('when a draft is issued after its client became reverse-charge, then it is taxed as the client is at issue', async () => {
    const t = ctx.t;
    const vat = await aRate(t, { percentage: 20 });
    const clientId = await aClientId(t);
    const draft = await t.api.post('/invoices', anInvoice(clientId, { items: [line('Work', 100)], default_tax_rate_ids: [vat] }));
    expect(draft.body.invoice.total).toBe(120);

    await t.api.patch(`/clients/${clientId}`, { tax_exempt: 'reverse' });
    await t.api.post(`/invoices/${draft.body.invoice.id}/initiate-payment`, {});
    const issued = await t.api.get(`/invoices/${draft.body.invoice.id}`);

    expect(issued.body.invoice).toMatchObject({ status: 'sent', tax_exempt: 'reverse', total_tax: 0, total: 100, amount_due: 100 });
    expect(issued.body.invoice.buyer.tax_exempt).toBe('reverse');
  });

  test("when a client becomes reverse-charge, then its drafts show the taxes they would be issued with, and a draft with its own tax_exempt or an issued invoice keeps its figures", async () => {
    // Arrange
    const t = ctx.t;
    const vat = await aRate(t, { percentage: 20 });
    const inclusive = await aRate(t, { percentage: 20, inclusive: true });
    const clientId = await aClientId(t);
    const draft = (await t.api.post('/invoices', anInvoice(clientId, { items: [line('Work', 100)], default_tax_rate_ids: [vat] }))).body.invoice;
    const inclusiveDraft = (await t.api.post('/invoices', anInvoice(clientId, { items: [line('Boxed', 120)], default_tax_rate_ids: [inclusive] }))).body.invoice;
    const ownStatus = (await t.api.post('/invoices', anInvoice(clientId, { items: [line('Work', 100)], default_tax_rate_ids: [vat], tax_exempt: 'none' }))).body.invoice;
    const issued = (await t.api.post('/invoices', anInvoice(clientId, { items: [line('Work', 100)], default_tax_rate_ids: [vat] }))).body.invoice;
    await t.api.post(`/invoices/${issued.id}/initiate-payment`, {});

    // Act
    const patched = await t.api.patch(`/clients/${clientId}`, { tax_exempt: 'reverse' });
    const read = async (id: number) => (await t.api.get(`/invoices/${id}`)).body.invoice;

    // Assert: 100 at 20 % reverse-charged is 100 with no tax; an inclusive 120 keeps its price, all of it taxable (contract, "Tax")
    expect(patched.status).toBe(200);
    expect(await read(draft.id)).toMatchObject({ status: 'draft', tax_exempt: 'reverse', total_tax: 0, total: 100, amount_due: 100 });
    expect(await read(inclusiveDraft.id)).toMatchObject({ tax_exempt: 'reverse', total_excluding_tax: 120, total_tax: 0, total: 120, items: [expect.objectContaining({ amount_excluding_tax: 120 })] });
    expect(await read(ownStatus.id)).toMatchObject({ tax_exempt: 'none', total_tax: 20, total: 120 });
    expect(await read(issued.id)).toMatchObject({ status: 'sent', tax_exempt: 'none', total_tax: 20, total: 120 });
  });

  test("when a draft's own tax_exempt is patched to null, then it follows its client's tax status again", async () => {
    // Arrange: a reverse-charge client, and a draft that overrides it
    const t = ctx.t;
    const vat = await aRate(t, { percentage: 20 });
    const clientId = await aClientId(t, { tax_exempt: 'reverse' });
    const draft = (await t.api.post('/invoices', anInvoice(clientId, { items: [line('Work', 100)], default_tax_rate_ids: [vat], tax_exempt: 'none' }))).body.invoice;

    // Act
    const res = await t.api.patch(`/invoices/${draft.id}`, { tax_exempt: null });

    // Assert
    expect(draft).toMatchObject({ tax_exempt: 'none', total: 120 });
    expect(res.status).toBe(200);
    expect(res.body.invoice).toMatchObject({ tax_exempt: 'reverse', total_tax: 0, total: 100 });
  });
});

describe('Tax computed elsewhere and a caller rounding', () => {
  test("when a shop's line taxes are within one minor unit, then they are accepted and summed for the rate", async () => {
    const t = ctx.t;
    const vat = await aRate(t, { percentage: 19 });
    const clientId = await aClientId(t);
    const shopTax = (amount: number) => ({ tax_amounts: [{ tax_rate_id: vat, amount }] });

    // The shop rounded per line: 0.24 three times = 0.72 (the rate's own rounding would give 0.71).
    const res = await t.api.post('/invoices', anInvoice(clientId, { items: [line('A', 1.25, shopTax(0.24)), line('B', 1.25, shopTax(0.24)), line('C', 1.25, shopTax(0.24))], default_tax_rate_ids: [vat] }));

    expect(res.status).toBe(201);
    expect(res.body.invoice).toMatchObject({ total_tax: 0.72, total: 4.47 });
  });

  test('when a line tax is two minor units off, then 422 names it', async () => {
    const t = ctx.t;
    const vat = await aRate(t, { percentage: 19 });
    const clientId = await aClientId(t);

    // The line's own tax is 0.2375 → 0.24; 0.26 is two cents off.
    const res = await t.api.post('/invoices', anInvoice(clientId, { items: [line('A', 1.25, { tax_amounts: [{ tax_rate_id: vat, amount: 0.26 }] })], default_tax_rate_ids: [vat] }));

    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(['items.0.tax_amounts.0.amount']);
  });

  test('when only some lines of a rate carry tax_amounts, then 422', async () => {
    const t = ctx.t;
    const vat = await aRate(t, { percentage: 19 });
    const clientId = await aClientId(t);

    const res = await t.api.post('/invoices', anInvoice(clientId, { items: [line('A', 1.25, { tax_amounts: [{ tax_rate_id: vat, amount: 0.24 }] }), line('B', 1.25)], default_tax_rate_ids: [vat] }));

    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors).some((field) => field.startsWith('items.1'))).toBe(true);
  });

  test('when a caller rounding is within one minor unit per line, then it is added; beyond that, 422', async () => {
    const t = ctx.t;
    const clientId = await aClientId(t);

    const within = await t.api.post('/invoices', anInvoice(clientId, { items: [line('A', 10)], rounding_amount: -0.01 }));
    const beyond = await t.api.post('/invoices', anInvoice(clientId, { items: [line('A', 10)], rounding_amount: 0.02 }));

    expect(within.body.invoice).toMatchObject({ rounding_amount: -0.01, total: 9.99 });
    expect(beyond.status).toBe(422);
    expect(Object.keys(beyond.body.errors)).toEqual(['rounding_amount']);
  });
});

describe('Re-pricing a draft', () => {
  test('when a patch replaces the lines without a rounding_amount, then the old rounding does not carry over', async () => {
    const clientId = await aClientId(ctx.t);
    const draft = await ctx.t.api.post('/invoices', anInvoice(clientId, { items: [line('A', 10), line('B', 10)], rounding_amount: 0.02 }));

    const patched = await ctx.t.api.patch(`/invoices/${draft.body.invoice.id}`, { items: [line('C', 5)] });

    expect(patched.status).toBe(200);
    expect(patched.body.invoice).toMatchObject({ rounding_amount: 0, total: 5 });
  });
});

describe('Rates an invoice may not mix or name', () => {
  test('when an invoice mixes inclusive and exclusive rates, then 422', async () => {
    const t = ctx.t;
    const inclusive = await aRate(t, { percentage: 19, inclusive: true });
    const exclusive = await aRate(t, { percentage: 7 });
    const clientId = await aClientId(t);

    const res = await t.api.post('/invoices', anInvoice(clientId, { items: [line('A', 10, { tax_rate_ids: [inclusive] }), line('B', 10, { tax_rate_ids: [exclusive] })] }));

    expect(res.status).toBe(422);
    expect(res.body.errors.items).toBeDefined();
  });

  test('when a line has two inclusive rates, then 422 names its tax_rate_ids', async () => {
    const t = ctx.t;
    const first = await aRate(t, { percentage: 19, inclusive: true });
    const second = await aRate(t, { percentage: 7, inclusive: true });
    const clientId = await aClientId(t);

    const res = await t.api.post('/invoices', anInvoice(clientId, { items: [line('A', 10, { tax_rate_ids: [first, second] })] }));

    expect(res.status).toBe(422);
    expect(res.body.errors['items.0.tax_rate_ids']).toBeDefined();
  });

  test("when a line names an unknown rate or another business's, then 422 names the field and the ids", async () => {
    const t = ctx.t;
    const other = await ctx.app.tenant();
    const theirs = await aRate(other, { percentage: 19 });
    const clientId = await aClientId(t);

    const res = await t.api.post('/invoices', anInvoice(clientId, { items: [line('A', 10, { tax_rate_ids: [theirs] })], default_tax_rate_ids: [999_999] }));

    expect(res.status).toBe(422);
    expect(res.body.errors['items.0.tax_rate_ids'][0]).toContain(String(theirs));
    // Checked though no item uses them: the invoice keeps its defaults.
    expect(res.body.errors.default_tax_rate_ids[0]).toContain('999999');
  });

  test('when a rate is archived, then new lines cannot take it, but a draft that has it is still changed and issued', async () => {
    const t = ctx.t;
    const vat = await aRate(t, { percentage: 19 });
    const clientId = await aClientId(t);
    const draft = await t.api.post('/invoices', anInvoice(clientId, { items: [line('A', 100)], default_tax_rate_ids: [vat] }));
    await t.api.patch(`/tax-rates/${vat}`, { active: false });

    const refused = await t.api.post('/invoices', anInvoice(clientId, { items: [line('A', 100)], default_tax_rate_ids: [vat] }));
    const patched = await t.api.patch(`/invoices/${draft.body.invoice.id}`, { notes: 'Still taxed' });
    const issued = await t.api.post(`/invoices/${draft.body.invoice.id}/initiate-payment`, {});

    expect(refused.status).toBe(422);
    expect(refused.body.errors.default_tax_rate_ids).toBeDefined();
    expect(patched.status).toBe(200);
    expect(patched.body.invoice).toMatchObject({ total_tax: 19, total: 119 });
    expect(issued.status).toBe(200);
  });

  test('when a rate is renamed, then a draft issued later takes the new name and an issued invoice keeps the old one', async () => {
    const t = ctx.t;
    const vat = await aRate(t, { display_name: 'MwSt', percentage: 19 });
    const clientId = await aClientId(t);
    const issuedEarly = await t.api.post('/invoices', anInvoice(clientId, { items: [line('A', 100)], default_tax_rate_ids: [vat] }));
    await t.api.post(`/invoices/${issuedEarly.body.invoice.id}/initiate-payment`, {});
    const draft = await t.api.post('/invoices', anInvoice(clientId, { items: [line('A', 100)], default_tax_rate_ids: [vat] }));

    await t.api.patch(`/tax-rates/${vat}`, { display_name: 'USt 19 %' });
    await t.api.post(`/invoices/${draft.body.invoice.id}/initiate-payment`, {});

    expect((await t.api.get(`/invoices/${issuedEarly.body.invoice.id}`)).body.invoice.tax_breakdown[0].display_name).toBe('MwSt');
    expect((await t.api.get(`/invoices/${draft.body.invoice.id}`)).body.invoice.tax_breakdown[0].display_name).toBe('USt 19 %');
  });
});

describe('Both parties on the invoice', () => {
  test('when a draft is read, then it shows the business and the client as they are now', async () => {
    const t = await ctx.app.tenant();
    await ctx.app.server.services.businesses.update(t.businessId, { legal_name: 'Muster GmbH', address_line1: 'Hauptstr. 1', city: 'Berlin', postal_code: '10115', tax_id: 'DE123456789' });
    const clientId = await aClientId(t, { company: 'Acme SARL', address: '1 rue de la Paix', city: 'Paris', postal_code: '75002', country: 'FR', tax_id: 'FR12345678901' });
    const draft = await t.api.post('/invoices', anInvoice(clientId));

    await t.api.patch(`/clients/${clientId}`, { city: 'Lyon' });
    const read = await t.api.get(`/invoices/${draft.body.invoice.id}`);

    expect(read.body.invoice.seller).toMatchObject({ legal_name: 'Muster GmbH', address_line1: 'Hauptstr. 1', city: 'Berlin', postal_code: '10115', tax_id: 'DE123456789' });
    expect(read.body.invoice.buyer).toMatchObject({ company: 'Acme SARL', address: '1 rue de la Paix', city: 'Lyon', country: 'FR', tax_id: 'FR12345678901', tax_exempt: 'none' });
  });

  test('when an invoice is issued, then later changes to the business and the client do not change it', async () => {
    const t = await ctx.app.tenant();
    await ctx.app.server.services.businesses.update(t.businessId, { legal_name: 'Before Ltd' });
    const clientId = await aClientId(t, { city: 'Paris' });
    const draft = await t.api.post('/invoices', anInvoice(clientId));
    await t.api.post(`/invoices/${draft.body.invoice.id}/initiate-payment`, {});

    await ctx.app.server.services.businesses.update(t.businessId, { legal_name: 'After Ltd' });
    await t.api.patch(`/clients/${clientId}`, { city: 'Lyon' });
    const read = await t.api.get(`/invoices/${draft.body.invoice.id}`);
    const listed = await t.api.get(`/invoices?client_id=${clientId}`);

    expect(read.body.invoice.seller.legal_name).toBe('Before Ltd');
    expect(read.body.invoice.buyer.city).toBe('Paris');
    expect(listed.body.data[0].seller.legal_name).toBe('Before Ltd');
  });

  test("when an invoice gives no buyer_reference, then it takes the client's; a purchase order is kept", async () => {
    const t = ctx.t;
    const clientId = await aClientId(t, { buyer_reference: '04011000-12345-67' });

    const defaulted = await t.api.post('/invoices', anInvoice(clientId, { purchase_order: 'PO-7' }));
    const given = await t.api.post('/invoices', anInvoice(clientId, { buyer_reference: 'REF-1' }));

    expect(defaulted.body.invoice).toMatchObject({ buyer_reference: '04011000-12345-67', purchase_order: 'PO-7' });
    expect(given.body.invoice.buyer_reference).toBe('REF-1');
  });
});

describe('Everything that shows or charges an amount', () => {
  test('when a taxed invoice is created, then its event, payment status and a simulated payment use the taxed total', async () => {
    const t = await ctx.app.tenant();
    const vat = await aRate(t, { percentage: 19 });
    const clientId = await aClientId(t);
    const created = await t.api.post('/invoices', anInvoice(clientId, { items: [line('A', 100)], default_tax_rate_ids: [vat] }));
    const id = created.body.invoice.id;
    await t.api.post(`/invoices/${id}/initiate-payment`, {});

    const status = await t.api.get(`/invoices/${id}/payment-status`);
    const paid = await t.api.post(`/invoices/${id}/simulate-payment`, {});
    const events = await eventsOf(ctx.app, t.businessId);

    expect(status.body).toMatchObject({ total: 119, amount_due: 119 });
    expect(paid.body.payment.amount).toBe(119);
    expect(paid.body.invoice.status).toBe('paid');
    expect(events.find((event) => event.type === 'invoice.created')?.data.invoice).toMatchObject({ total_tax: 19, total: 119, tax_breakdown: [expect.objectContaining({ tax_amount: 19 })] });
  });

  test('when quick-charge names rates, then its invoice is taxed as POST /invoices taxes it', async () => {
    const t = ctx.t;
    const vat = await aRate(t, { percentage: 19 });

    const one = await t.api.post('/quick-charge', { amount: 100, currency: 'EUR', tax_rate_ids: [vat], client: aClient() });
    const items = await t.api.post('/quick-charge', { items: [line('A', 50), line('B', 50)], currency: 'EUR', default_tax_rate_ids: [vat], tax_exempt: 'reverse', client: aClient() });

    expect(one.status).toBe(201);
    expect(one.body.invoice).toMatchObject({ status: 'sent', total_tax: 19, total: 119 });
    expect(items.body.invoice).toMatchObject({ tax_exempt: 'reverse', total_tax: 0, total: 100 });
    expect(one.body.invoice.seller.legal_name).toEqual(expect.any(String));
  });

  test('when quick-charge gives tax_rate_ids with items, then 422 names tax_rate_ids', async () => {
    const res = await ctx.t.api.post('/quick-charge', { items: [line('A', 50)], tax_rate_ids: [1], currency: 'EUR', client: aClient() });

    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(['tax_rate_ids']);
  });

  test('when quick-charge with an amount names a rate the business does not have, then 422 names tax_rate_ids, the field sent', async () => {
    const res = await ctx.t.api.post('/quick-charge', { amount: 10, tax_rate_ids: [987_654], currency: 'EUR', client: aClient() });

    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(['tax_rate_ids']);
  });
});
