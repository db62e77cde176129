/**
 * Credit notes over HTTP (contract, "Credit notes"): lines copied from the invoice or of their own,
 * the CN- series, what a note applies, refunds or leaves out of band, the one status rule, the
 * void of an issued invoice, the list, the PDF and `credit_note.created`. Each figure is worked out
 * by hand beside it. The invoice of `aDraft` has three lines: 2 × 50.00, 1 × 30.00, 1 × 20.00 = 150.00.
 */
import { aClient, aDraft, anInvoice, eventsOf, Tenant, useApp } from '../support/app';
import { pdfText, renderPdf } from '../support/pdf';

const ctx = useApp({ rateLimitPerMinute: 100_000 });

async function aSent(t: Tenant, overrides: Record<string, unknown> = {}): Promise<any> {
  const draft = await aDraft(t, overrides);
  const res = await t.api.post(`/invoices/${draft.id}/initiate-payment`);
  if (res.status !== 200) throw new Error(`could not issue: ${res.status} ${res.text}`);
  return (await t.api.get(`/invoices/${draft.id}`)).body.invoice;
}

async function pay(t: Tenant, invoiceId: number, amount?: number): Promise<any> {
  const res = await t.api.post(`/invoices/${invoiceId}/payments`, { method: 'bank_transfer', ...(amount === undefined ? {} : { amount }) });
  if (res.status !== 201) throw new Error(`could not pay: ${res.status} ${res.text}`);
  return res.body.payment;
}

async function aRate(t: Tenant, body: Record<string, unknown>): Promise<number> {
  const res = await t.api.post('/tax-rates', { display_name: 'VAT', ...body });
  if (res.status !== 201) throw new Error(`could not create a tax rate: ${res.status} ${res.text}`);
  return res.body.tax_rate.id;
}

const spaced = (text: string) => new RegExp(text.split(/\s+/).map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('\\s+'));

describe('POST /invoices/{id}/credit-notes', () => {
  test('when a line of a sent invoice is credited, then the note copies it, is numbered CN-000001, takes its total off the amount due, and fires credit_note.created', async () => {
    // Arrange
    const t = await ctx.app.tenant();
    const invoice = await aSent(t);
    const hosting = invoice.items[1];

    // Act
    const res = await t.api.post(`/invoices/${invoice.id}/credit-notes`, { items: [{ invoice_item_id: hosting.id }], reason: 'order_change', memo: 'Hosting was not needed', metadata: { ticket: 'T-9' } });

    // Assert: 30.00 credited, all of it off the 150.00 due.
    expect(res.status).toBe(201);
    expect(res.body.credit_note).toMatchObject({
      number: 'CN-000001',
      invoice_id: invoice.id,
      client_id: invoice.client_id,
      currency: 'USD',
      reason: 'order_change',
      memo: 'Hosting was not needed',
      subtotal: 30,
      total_excluding_tax: 30,
      total_tax: 0,
      rounding_amount: 0,
      total: 30,
      amount_applied: 30,
      amount_refunded: 0,
      out_of_band_amount: 0,
      refund_ids: [],
      metadata: { ticket: 'T-9' },
      livemode: false,
    });
    expect(res.body.credit_note.items).toEqual([
      { id: expect.any(Number), invoice_item_id: hosting.id, description: 'Hosting', quantity: 1, unit_price: 30, amount: 30, amount_excluding_tax: 30, tax_rate_ids: [] },
    ]);
    expect(res.body.credit_note.seller).toEqual(invoice.seller);
    expect(res.body.credit_note.buyer).toEqual(invoice.buyer);
    expect(res.body.invoice).toMatchObject({ status: 'sent', amount_credited: 30, amount_due: 120, credit_note_ids: [res.body.credit_note.id] });
    const events = (await eventsOf(ctx.app, t.businessId)).filter((e) => e.type === 'credit_note.created');
    expect(events).toHaveLength(1);
    expect(events[0].data.credit_note).toEqual(res.body.credit_note);
    expect(events[0].data.invoice).toEqual(res.body.invoice);
    expect((await t.api.get(`/credit-notes/${res.body.credit_note.id}`)).body.credit_note).toEqual(res.body.credit_note);
  });

  test('when a line is credited in parts, then each part defaults to what is left, and more than is left is refused', async () => {
    const t = await ctx.app.tenant();
    const invoice = await aSent(t);
    const design = invoice.items[0]; // 2 × 50.00

    const first = await t.api.post(`/invoices/${invoice.id}/credit-notes`, { items: [{ invoice_item_id: design.id, quantity: 0.5 }] });
    const tooMuch = await t.api.post(`/invoices/${invoice.id}/credit-notes`, { items: [{ invoice_item_id: design.id, quantity: 2 }] });
    const rest = await t.api.post(`/invoices/${invoice.id}/credit-notes`, { items: [{ invoice_item_id: design.id }] });
    const again = await t.api.post(`/invoices/${invoice.id}/credit-notes`, { items: [{ invoice_item_id: design.id }] });

    // 0.5 × 50.00 = 25.00; then the 1.5 left = 75.00.
    expect(first.body.credit_note).toMatchObject({ number: 'CN-000001', total: 25 });
    expect(tooMuch.status).toBe(422);
    expect(tooMuch.body.errors['items.0.quantity']).toEqual(['must not exceed what earlier credit notes left of the line (1.5)']);
    expect(rest.body.credit_note).toMatchObject({ number: 'CN-000002', total: 75, items: [expect.objectContaining({ quantity: 1.5 })] });
    expect(rest.body.invoice).toMatchObject({ amount_credited: 100, amount_due: 50, status: 'sent' });
    expect(again.status).toBe(422);
    expect(again.body.errors['items.0.invoice_item_id']).toEqual(['this line has been credited in full already']);
  });

  test('when the credits would exceed the invoice total, or a line is unknown, then 422 names it and nothing is written', async () => {
    const t = await ctx.app.tenant();
    const invoice = await aSent(t);
    const other = await aSent(t);

    const tooBig = await t.api.post(`/invoices/${invoice.id}/credit-notes`, { items: [{ description: 'Goodwill', quantity: 1, unit_price: 150.01 }] });
    const foreignLine = await t.api.post(`/invoices/${invoice.id}/credit-notes`, { items: [{ invoice_item_id: other.items[0].id }] });
    const mixed = await t.api.post(`/invoices/${invoice.id}/credit-notes`, { items: [{ invoice_item_id: invoice.items[0].id, unit_price: 1 }] });
    const zero = await t.api.post(`/invoices/${invoice.id}/credit-notes`, { items: [{ description: 'Nothing', quantity: 1, unit_price: 0 }] });

    expect(tooBig.status).toBe(422);
    expect(tooBig.body.errors.items[0]).toMatch(/totals 150\.01 USD, more than the 150 USD/);
    expect(foreignLine.body.errors['items.0.invoice_item_id']).toEqual(['does not name a line of this invoice']);
    expect(mixed.status).toBe(422);
    expect(Object.keys(mixed.body.errors)).toEqual(['items.0']);
    expect(zero.body.errors.items[0]).toMatch(/must total more than zero/);
    expect((await t.api.get(`/invoices/${invoice.id}`)).body.invoice).toMatchObject({ amount_credited: 0, credit_note_ids: [] });
    expect((await t.api.get('/credit-notes')).body.data).toEqual([]);
  });

  test('when the invoice is a draft or void, then 422 invalid_state', async () => {
    const t = await ctx.app.tenant();
    const draft = await aDraft(t);
    const voided = await aDraft(t);
    await t.api.post(`/invoices/${voided.id}/void`);

    for (const id of [draft.id, voided.id]) {
      const res = await t.api.post(`/invoices/${id}/credit-notes`, { items: [{ description: 'x', quantity: 1, unit_price: 1 }] });
      expect(res.status).toBe(422);
      expect(res.body.error).toBe('invalid_state');
    }
  });

  test('when credits cover the total of an invoice with nothing paid, then it is void', async () => {
    const t = await ctx.app.tenant();
    const invoice = await aSent(t);

    await t.api.post(`/invoices/${invoice.id}/credit-notes`, { items: [{ invoice_item_id: invoice.items[0].id }] });
    const last = await t.api.post(`/invoices/${invoice.id}/credit-notes`, { items: [{ invoice_item_id: invoice.items[1].id }, { invoice_item_id: invoice.items[2].id }] });

    expect(last.body.invoice).toMatchObject({ status: 'void', amount_credited: 150, amount_due: 0, voided_at: expect.any(String) });
    expect((await t.api.post(`/invoices/${invoice.id}/payments`, { method: 'cash' })).body.error).toBe('invalid_state');
  });

  test('when a paid invoice is credited with refund: true, then the rest is refunded from its payments newest first and it stays paid', async () => {
    // Arrange: 50.00 then 100.00 paid.
    const t = await ctx.app.tenant();
    const invoice = await aSent(t);
    const older = await pay(t, invoice.id, 50);
    const newer = await pay(t, invoice.id);

    // Act: 120.00 credited (Design 100.00 + Domain 20.00), nothing due to take it off.
    const res = await t.api.post(`/invoices/${invoice.id}/credit-notes`, { items: [{ invoice_item_id: invoice.items[0].id }, { invoice_item_id: invoice.items[2].id }], refund: true });

    // Assert: 100.00 back on the newer payment, 20.00 on the older; 30.00 paid + 120.00 credited cover the 150.00.
    expect(res.status).toBe(201);
    expect(res.body.credit_note).toMatchObject({ total: 120, amount_applied: 0, amount_refunded: 120, out_of_band_amount: 0 });
    expect(res.body.credit_note.refund_ids).toHaveLength(2);
    const refunds = (await t.api.get(`/refunds?invoice_id=${invoice.id}`)).body.data;
    expect(refunds.map((r: any) => [r.payment_id, r.amount, r.status, r.credit_note_id, r.reason])).toEqual([
      [newer.id, 100, 'succeeded', res.body.credit_note.id, 'Credit note CN-000001'],
      [older.id, 20, 'succeeded', res.body.credit_note.id, 'Credit note CN-000001'],
    ]);
    expect(res.body.invoice).toMatchObject({ status: 'paid', amount_paid: 30, amount_credited: 120, amount_due: 0 });
    const types = (await eventsOf(ctx.app, t.businessId)).map((e) => e.type);
    expect(types.filter((type) => type === 'payment.refunded')).toHaveLength(2);
    expect(types.filter((type) => type === 'invoice.paid')).toHaveLength(1); // from the payment, not again
  });

  test('when a paid invoice is credited without refund, then the total is recorded as settled outside the service', async () => {
    const t = await ctx.app.tenant();
    const invoice = await aSent(t);
    await pay(t, invoice.id);

    const res = await t.api.post(`/invoices/${invoice.id}/credit-notes`, { items: [{ invoice_item_id: invoice.items[1].id }] });

    expect(res.body.credit_note).toMatchObject({ total: 30, amount_applied: 0, amount_refunded: 0, out_of_band_amount: 30, refund_ids: [] });
    expect(res.body.invoice).toMatchObject({ status: 'paid', amount_paid: 150, amount_credited: 30, amount_due: 0 });
  });

  test('when a partly paid invoice is credited in full with refund: true, then the due part is applied, the paid part refunded, and it is void', async () => {
    const t = await ctx.app.tenant();
    const invoice = await aSent(t);
    await pay(t, invoice.id, 40);

    const res = await t.api.post(`/invoices/${invoice.id}/credit-notes`, { items: invoice.items.map((item: any) => ({ invoice_item_id: item.id })), refund: true });

    // 150.00: 110.00 applied to what was due, 40.00 refunded; nothing paid and credits cover the total.
    expect(res.body.credit_note).toMatchObject({ total: 150, amount_applied: 110, amount_refunded: 40, out_of_band_amount: 0 });
    expect(res.body.invoice).toMatchObject({ status: 'void', amount_paid: 0, amount_credited: 150, amount_due: 0 });
  });

  test('when a partly paid invoice is credited for what is due, then payments and credits cover it: paid, and invoice.paid fires', async () => {
    const t = await ctx.app.tenant();
    const invoice = await aSent(t);
    await pay(t, invoice.id, 40);

    const res = await t.api.post(`/invoices/${invoice.id}/credit-notes`, { items: [{ description: 'Settlement discount', quantity: 1, unit_price: 110 }] });

    expect(res.body.credit_note).toMatchObject({ total: 110, amount_applied: 110, out_of_band_amount: 0 });
    expect(res.body.invoice).toMatchObject({ status: 'paid', amount_paid: 40, amount_credited: 110, amount_due: 0, paid_at: expect.any(String) });
    const paid = (await eventsOf(ctx.app, t.businessId)).filter((e) => e.type === 'invoice.paid');
    expect(paid).toHaveLength(1);
    expect(paid[0].data.invoice.amount_credited).toBe(110);
  });

  test('when a paid invoice credited out of band has its payment refunded, then it stays paid while the credits cover it', async () => {
    const t = await ctx.app.tenant();
    const invoice = await aSent(t);
    const payment = await pay(t, invoice.id);
    await t.api.post(`/invoices/${invoice.id}/credit-notes`, { items: [{ invoice_item_id: invoice.items[2].id }] });

    // 20.00 credited and settled outside; then 20.00 of the payment refunded: 130.00 paid + 20.00 credited.
    const res = await t.api.post(`/payments/${payment.id}/refund`, { amount: 20 });

    expect(res.body.invoice).toMatchObject({ status: 'paid', amount_paid: 130, amount_credited: 20, amount_due: 0 });
  });

  test('when a line is credited under a 19 % rate, then the note is taxed by the invoice rate, even after the rate is archived', async () => {
    const t = await ctx.app.tenant();
    const vat = await aRate(t, { percentage: 19 });
    const invoice = await aSent(t, { default_tax_rate_ids: [vat] });
    await t.api.patch(`/tax-rates/${vat}`, { active: false, display_name: 'Renamed VAT' });

    const copied = await t.api.post(`/invoices/${invoice.id}/credit-notes`, { items: [{ invoice_item_id: invoice.items[1].id }] });
    const ownWithArchived = await t.api.post(`/invoices/${invoice.id}/credit-notes`, { items: [{ description: 'Goodwill', quantity: 1, unit_price: 5, tax_rate_ids: [vat] }] });

    // 30.00 × 19 % = 5.70; the rate keeps its name as the invoice was issued with it.
    expect(copied.status).toBe(201);
    expect(copied.body.credit_note).toMatchObject({ total_excluding_tax: 30, total_tax: 5.7, total: 35.7, tax_exempt: 'none' });
    expect(copied.body.credit_note.tax_breakdown).toEqual([{ tax_rate_id: vat, display_name: 'VAT', category: 'S', percentage: 19, inclusive: false, taxable_amount: 30, tax_amount: 5.7, exemption_reason: null }]);
    expect(copied.body.credit_note.items[0].tax_rate_ids).toEqual([vat]);
    expect(ownWithArchived.status).toBe(422);
    expect(Object.keys(ownWithArchived.body.errors)).toEqual(['items.0.tax_rate_ids']);
  });

  test('when every line is credited in parts, then the last part takes the per-rate rounding and the credits equal the total to the cent', async () => {
    // Arrange: three lines of 0.35 under 19 %: tax once for the rate 1.05 × 19 % = 0.1995 → 0.20; total 1.25.
    const t = await ctx.app.tenant();
    const vat = await aRate(t, { percentage: 19 });
    const lines = [1, 2, 3].map((n) => ({ description: `Part ${n}`, quantity: 1, unit_price: 0.35 }));
    const invoice = await aSent(t, { items: lines, default_tax_rate_ids: [vat] });
    expect(invoice.total).toBe(1.25);

    // Act: each line alone is 0.35 + 0.07 (0.0665 → 0.07) = 0.42; three notes would make 1.26.
    const first = await t.api.post(`/invoices/${invoice.id}/credit-notes`, { items: [{ invoice_item_id: invoice.items[0].id }] });
    const second = await t.api.post(`/invoices/${invoice.id}/credit-notes`, { items: [{ invoice_item_id: invoice.items[1].id }] });
    const last = await t.api.post(`/invoices/${invoice.id}/credit-notes`, { items: [{ invoice_item_id: invoice.items[2].id }] });

    // Assert: the last is 0.41, its rounding −0.01.
    expect([first.body.credit_note.total, second.body.credit_note.total]).toEqual([0.42, 0.42]);
    expect(last.body.credit_note).toMatchObject({ total_tax: 0.07, rounding_amount: -0.01, total: 0.41 });
    expect(last.body.invoice).toMatchObject({ amount_credited: 1.25, status: 'void' });
  });

  test('when the same Idempotency-Key is sent twice, then one credit note is made and the same answer returned', async () => {
    const t = await ctx.app.tenant();
    const invoice = await aSent(t);
    const body = { items: [{ invoice_item_id: invoice.items[2].id }] };

    const first = await t.api.post(`/invoices/${invoice.id}/credit-notes`, body, { headers: { 'Idempotency-Key': 'cn-once' } });
    const replay = await t.api.post(`/invoices/${invoice.id}/credit-notes`, body, { headers: { 'Idempotency-Key': 'cn-once' } });

    expect(replay.status).toBe(201);
    expect(replay.body).toEqual(first.body);
    expect((await t.api.get('/credit-notes')).body.data).toHaveLength(1);
  });
});

describe('POST /invoices/{id}/void', () => {
  test('when an issued invoice with nothing paid is voided, then a credit note cancels what earlier ones left, and the series keeps it', async () => {
    const t = await ctx.app.tenant();
    const invoice = await aSent(t);
    await t.api.post(`/invoices/${invoice.id}/credit-notes`, { items: [{ invoice_item_id: invoice.items[0].id, quantity: 1 }] });

    const res = await t.api.post(`/invoices/${invoice.id}/void`);

    // 150.00 − 50.00 credited = 100.00: the other Design unit, Hosting and Domain.
    expect(res.status).toBe(200);
    expect(res.body.invoice).toMatchObject({ status: 'void', amount_credited: 150, amount_due: 0 });
    expect(res.body.credit_note).toMatchObject({ number: 'CN-000002', reason: 'other', memo: 'Cancelled', total: 100, amount_applied: 100 });
    expect(res.body.credit_note.items.map((item: any) => [item.description, item.quantity])).toEqual([
      ['Design', 1],
      ['Hosting', 1],
      ['Domain', 1],
    ]);
    expect((await eventsOf(ctx.app, t.businessId)).filter((e) => e.type === 'credit_note.created')).toHaveLength(2);
  });

  test('when a draft is voided, then no credit note is made', async () => {
    const t = await ctx.app.tenant();
    const draft = await aDraft(t);

    const res = await t.api.post(`/invoices/${draft.id}/void`);

    expect(res.body).toMatchObject({ invoice: { status: 'void', number: 'INV-000001' }, credit_note: null });
    expect((await t.api.get('/credit-notes')).body.data).toEqual([]);
  });
});

describe('scopes', () => {
  test('when a key reads invoices only, then it lists credit notes and their events but cannot make one; a key without invoices:read lists none', async () => {
    const t = await ctx.app.tenant();
    const invoice = await aSent(t);
    await t.api.post(`/invoices/${invoice.id}/credit-notes`, { items: [{ invoice_item_id: invoice.items[2].id }] });
    const reader = await ctx.app.tenant({ businessId: t.businessId, scopes: ['invoices:read'] });
    const outsider = await ctx.app.tenant({ businessId: t.businessId, scopes: ['clients:read'] });

    const made = await reader.api.post(`/invoices/${invoice.id}/credit-notes`, { items: [{ invoice_item_id: invoice.items[1].id }] });

    expect((await reader.api.get('/credit-notes')).body.data).toHaveLength(1);
    expect((await reader.api.get('/events?type=credit_note.created')).body.data).toHaveLength(1);
    expect(made.status).toBe(403);
    expect(made.body.required_scope).toBe('invoices:write');
    expect((await outsider.api.get('/credit-notes')).status).toBe(403);
    expect((await outsider.api.get('/events?type=credit_note.created')).body.data).toEqual([]);
  });
});

describe('GET /credit-notes', () => {
  test('when filtered by invoice or client, then only theirs are listed, oldest first, and another business sees none', async () => {
    const t = await ctx.app.tenant();
    const client = (await t.api.post('/clients', aClient())).body.client;
    const mine = (await t.api.post('/invoices', anInvoice(client.id))).body.invoice;
    await t.api.post(`/invoices/${mine.id}/initiate-payment`);
    const other = await aSent(t);
    const a = (await t.api.post(`/invoices/${mine.id}/credit-notes`, { items: [{ invoice_item_id: mine.items[1].id }] })).body.credit_note;
    const b = (await t.api.post(`/invoices/${other.id}/credit-notes`, { items: [{ invoice_item_id: other.items[1].id }] })).body.credit_note;
    const c = (await t.api.post(`/invoices/${mine.id}/credit-notes`, { items: [{ invoice_item_id: mine.items[2].id }] })).body.credit_note;
    const stranger = await ctx.app.tenant();

    const ids = async (query: string, tenant = t) => (await tenant.api.get(`/credit-notes${query}`)).body.data.map((note: any) => note.id);

    expect(await ids('')).toEqual([a.id, b.id, c.id]);
    expect(await ids(`?invoice_id=${mine.id}`)).toEqual([a.id, c.id]);
    expect(await ids(`?client_id=${client.id}`)).toEqual([a.id, c.id]);
    expect(await ids(`?after=${a.id}`)).toEqual([b.id, c.id]);
    expect(await ids('', stranger)).toEqual([]);
    expect((await stranger.api.get(`/credit-notes/${a.id}`)).status).toBe(404);
  });

  test('when a credit note is downloaded, then its PDF says it is a credit note, names the invoice it corrects and shows its lines and settlement', async () => {
    const t = await ctx.app.tenant();
    const vat = await aRate(t, { percentage: 20 });
    const invoice = await aSent(t, { default_tax_rate_ids: [vat] });
    await pay(t, invoice.id);
    const note = (await t.api.post(`/invoices/${invoice.id}/credit-notes`, { items: [{ invoice_item_id: invoice.items[0].id, quantity: 1 }], reason: 'product_unsatisfactory', memo: 'One design round was cancelled', refund: true })).body.credit_note;

    const res = await t.api.get(`/credit-notes/${note.id}/pdf`);

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toContain('CN-000001.pdf');
    const text = await pdfText(res.bytes);
    for (const expected of ['CREDIT NOTE', 'Credit note number CN-000001', `Corrects invoice ${invoice.number}`, 'Reason Product unsatisfactory', `This credit note corrects invoice ${invoice.number}`, 'Design 1 $50.00 20 % $50.00', 'VAT 20 % on $50.00 $10.00', 'Total credited $60.00', 'Refunded $60.00', 'One design round was cancelled', 'TEST MODE']) {
      expect(text).toMatch(spaced(expected));
    }
    expect(await renderPdf(res.bytes, 'credit-note')).not.toHaveLength(0);
    // The invoice's own PDF (a receipt: 120.00 paid and 60.00 credited cover its 180.00) shows the credit.
    const receipt = await t.api.get(`/invoices/${invoice.id}/pdf`);
    expect(await pdfText(receipt.bytes)).toMatch(spaced('Credited $60.00'));
    expect(await renderPdf(receipt.bytes, 'credited-receipt')).not.toHaveLength(0);
  });
});
