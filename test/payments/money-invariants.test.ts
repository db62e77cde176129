/**
 * A probe of the money paths as a property: random payments (received elsewhere and simulated),
 * refunds, credit notes (refunding or settled outside) and voids, many at once on one invoice, and
 * after every round the books must balance. An invoice's `amount_paid` is what its payments
 * counted towards it less what was refunded of that; `amount_credited` is its credit notes'
 * totals, each applied, refunded or settled outside in full; its status follows from both by the
 * one rule; a payment never returns more than it took; every recorded payment, refund and credit
 * note has exactly one event. A seeded generator keeps a failure reproducible.
 */
import { aDraft, eventsOf, useApp } from '../support/app';

// Each round makes a dozen requests at once: the per-key limit is not what this probes.
const ctx = useApp({ rateLimitPerMinute: 10_000 });

/** mulberry32: small, seeded, good enough to pick operations. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Books {
  invoice: any;
  payments: any[];
  creditNotes: any[];
}

async function booksOf(invoiceId: number): Promise<Books> {
  const invoice = (await ctx.t.api.get(`/invoices/${invoiceId}`)).body.invoice;
  const payments = (await ctx.t.api.get(`/payments?invoice_id=${invoiceId}&limit=100`)).body.data;
  const creditNotes = (await ctx.t.api.get(`/credit-notes?invoice_id=${invoiceId}&per_page=100`)).body.data;
  return { invoice, payments, creditNotes };
}

/** Cents of a major-unit USD amount, without float drift. */
const cents = (major: number) => Math.round(major * 100);

function expectBalanced({ invoice, payments, creditNotes }: Books): void {
  const total = cents(invoice.total);
  const paid = cents(invoice.amount_paid);
  const credited = cents(invoice.amount_credited);
  // Recorded payments never take more than is due, so each counted in full; refunds come off that.
  const counted = payments.reduce((sum, p) => sum + cents(p.amount) - cents(p.amount_refunded), 0);
  expect(paid).toBe(counted);
  expect(paid).toBeGreaterThanOrEqual(0);
  expect(credited).toBe(creditNotes.reduce((sum, n) => sum + cents(n.total), 0));
  expect(invoice.credit_note_ids).toEqual(creditNotes.map((n) => n.id));
  for (const n of creditNotes) expect(cents(n.amount_applied) + cents(n.amount_refunded) + cents(n.out_of_band_amount)).toBe(cents(n.total));
  // What was settled outside the service left the books: the rest never exceeds the total.
  const outOfBand = creditNotes.reduce((sum, n) => sum + cents(n.out_of_band_amount), 0);
  expect(credited).toBeLessThanOrEqual(total);
  expect(paid + credited - outOfBand).toBeLessThanOrEqual(total);
  expect(cents(invoice.amount_due)).toBe(Math.max(0, total - paid - credited));
  for (const p of payments) {
    expect(cents(p.amount_refunded)).toBeGreaterThanOrEqual(0);
    expect(cents(p.amount_refunded)).toBeLessThanOrEqual(cents(p.amount));
    expect(p.status).toBe(cents(p.amount_refunded) === cents(p.amount) ? 'refunded' : 'succeeded');
  }
  if (invoice.status === 'void') expect(paid).toBe(0);
  else if (paid + credited >= total) expect(invoice.status).toBe('paid');
  else if (paid > 0) expect(invoice.status).toBe('partial');
  else expect(['sent', 'viewed']).toContain(invoice.status);
  if (paid === 0 && credited >= total) expect(invoice.status).toBe('void');
}

describe('money invariants under concurrent payments, refunds and voids', () => {
  test.each([1, 2, 3])('when random operations run at once on one invoice (seed %i), then after every round its books balance and every change has one event', async (seed) => {
    // Arrange
    const random = generator(seed);
    const draft = await aDraft(ctx.t, { items: [{ description: 'Work', quantity: 1, unit_price: 100 + Math.floor(random() * 900) + Math.floor(random() * 100) / 100 }] });
    await ctx.t.api.post(`/invoices/${draft.id}/initiate-payment`);
    const amountOf = (upTo: number) => Math.max(1, Math.floor(random() * upTo)) / 100;
    let succeededRefunds = 0;

    for (let round = 0; round < 5; round += 1) {
      // Act: a batch of operations chosen from the books as they stood before it.
      const before = await booksOf(draft.id);
      const due = cents(before.invoice.amount_due);
      const refundable = before.payments.filter((p) => p.status === 'succeeded');
      const batch = Array.from({ length: 6 }, () => {
        const pick = random();
        // A void succeeds only once everything is refunded, and ends the invoice: rare, and last.
        if (pick > 0.97) return ctx.t.api.post(`/invoices/${draft.id}/void`);
        if (pick > 0.85) {
          const uncredited = cents(before.invoice.total) - cents(before.invoice.amount_credited);
          const body = { items: [{ description: 'Credit', quantity: 1, unit_price: amountOf(Math.max(uncredited / 3, 1)) }], refund: random() < 0.5 };
          return ctx.t.api.post(`/invoices/${draft.id}/credit-notes`, body);
        }
        if (pick < 0.5 || !refundable.length) {
          const body = { amount: amountOf(Math.max(due, 1)) };
          return pick < 0.3 ? ctx.t.api.post(`/invoices/${draft.id}/payments`, { method: 'bank_transfer', ...body }) : ctx.t.api.post(`/invoices/${draft.id}/simulate-payment`, body);
        }
        {
          const payment = refundable[Math.floor(random() * refundable.length)];
          const left = cents(payment.amount) - cents(payment.amount_refunded);
          return ctx.t.api.post(`/payments/${payment.id}/refund`, random() < 0.3 ? {} : { amount: amountOf(left + 1) });
        }
      });
      const answers = await Promise.all(batch);

      // Assert: only documented outcomes, and balanced books.
      for (const answer of answers) expect([200, 201, 409, 422]).toContain(answer.status);
      succeededRefunds += answers.filter((a) => a.status === 201 && a.body.refund).length;
      // A credit note's refunds of recorded payments are made at once, each with its payment.refunded.
      succeededRefunds += answers.filter((a) => a.status === 201 && a.body.credit_note).reduce((sum, a) => sum + a.body.credit_note.refund_ids.length, 0);
      expectBalanced(await booksOf(draft.id));
    }

    // Closing: every payment refunded in full at once, twice over; then the invoice can be voided.
    const open = (await booksOf(draft.id)).payments.filter((p) => p.status === 'succeeded');
    const closing = await Promise.all([...open, ...open].map((p) => ctx.t.api.post(`/payments/${p.id}/refund`)));
    succeededRefunds += closing.filter((a) => a.status === 201).length;
    expect(closing.filter((a) => a.status === 201)).toHaveLength(open.length);
    const voided = await ctx.t.api.post(`/invoices/${draft.id}/void`);
    expect([200, 422]).toContain(voided.status);
    const closed = await booksOf(draft.id);
    expectBalanced(closed);
    expect(closed.invoice.amount_paid).toBe(0);

    const { payments } = closed;
    const events = (await eventsOf(ctx.app, ctx.t.businessId)).filter((e) => (e.data.invoice?.id ?? e.data.payment?.invoice_id) === draft.id);
    expect(events.filter((e) => e.type === 'payment.received')).toHaveLength(payments.length);
    expect(events.filter((e) => e.type === 'payment.refunded')).toHaveLength(succeededRefunds);
    expect(events.filter((e) => e.type === 'credit_note.created')).toHaveLength(closed.creditNotes.length);
  });
});
