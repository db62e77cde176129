/**
 * Stripe refunds whose outcome is not known at once (Stripe's answer lost, Stripe unreachable), the
 * excess of an overpayment refunded exactly once, and refunds that fail later at the bank: the
 * contract's "Gateway money rules".
 */
import Stripe from 'stripe';
import { toDbTime } from '../../server/db/time';
import { stripeClientOptions } from '../../server/gateways/stripe';
import { useStripeGateway } from '../support/stripe-double';
import { aPaidByCard as paid, anOverpaidCheckout as overpaid, paymentEvents, sweepLater as sweep } from '../support/stripe-payments';

// One key makes every request of this file: more than the default 120 a minute.
const gateway = useStripeGateway({ rateLimitPerMinute: 1000 });
const { stripe } = gateway;
afterEach(() => {
  stripe.failWith = null;
  stripe.refundFault = null;
});

const aPaidByCard = () => paid(gateway);
const anOverpaidCheckout = () => overpaid(gateway);
const sweepLater = () => sweep(gateway);
const refundsOf = (paymentId: number, type?: string) => paymentEvents(gateway, paymentId, type);
const readPayment = async (id: number) => (await gateway.live.api.get(`/payments/${id}`)).body.payment;
const readInvoice = async (id: number) => (await gateway.live.api.get(`/invoices/${id}`)).body.invoice;
const refundsOfPayment = async (id: number) => (await gateway.live.api.get(`/refunds?payment_id=${id}`)).body.data;

describe('a Stripe refund whose outcome is unknown', () => {
  test.each([
    ['answers 500', 'server_error'],
    ['drops the connection', 'drop_connection'],
  ] as const)('when Stripe makes the refund and then %s, then the API answers 502 with the refund pending, and a retry with the same Idempotency-Key books that one refund once', async (_case, fault) => {
    // Arrange
    const { invoice, payment, paymentIntent } = await aPaidByCard();
    const headers = { 'Idempotency-Key': `lost-${payment.id}` };
    stripe.refundFault = fault;

    // Act
    const first = await gateway.live.api.post(`/payments/${payment.id}/refund`, { amount: 40 }, { headers });
    stripe.refundFault = null; // the connection is back
    const pending = await refundsOfPayment(payment.id);
    const retry = await gateway.live.api.post(`/payments/${payment.id}/refund`, { amount: 40 }, { headers });

    // Assert
    expect(first.status).toBe(502);
    expect(first.body).toMatchObject({ error: 'gateway_error', message: expect.stringContaining('pending') });
    expect(pending).toEqual([expect.objectContaining({ amount: 40, status: 'pending' })]);
    expect(retry.status).toBe(201);
    expect(retry.body.refund).toMatchObject({ id: pending[0].id, amount: 40, status: 'succeeded' });
    expect(stripe.paymentIntents.get(paymentIntent)!.refunds).toEqual([expect.objectContaining({ amount: 4000 })]);
    expect(await readPayment(payment.id)).toMatchObject({ amount_refunded: 40, status: 'succeeded' });
    expect(await readInvoice(invoice.id)).toMatchObject({ amount_paid: 110, status: 'partial' });
    expect(await refundsOf(payment.id)).toHaveLength(1);
  });

  test('when the same Stripe idempotency key is sent with other parameters, then the double refuses it as Stripe does', async () => {
    const { paymentIntent } = await aPaidByCard();
    const account = new Stripe(stripe.paymentIntents.get(paymentIntent)!.account, stripeClientOptions(stripe.url));
    await account.refunds.create({ payment_intent: paymentIntent, amount: 1000 }, { idempotencyKey: 'same-key' });

    const again = account.refunds.create({ payment_intent: paymentIntent, amount: 2000 }, { idempotencyKey: 'same-key' });

    await expect(again).rejects.toMatchObject({ type: 'StripeIdempotencyError', statusCode: 400 });
    expect(stripe.paymentIntents.get(paymentIntent)!.refunds).toHaveLength(1);
  });

  test('when charge.refunded arrives while the refund is pending, then that refund is settled and no other is recorded', async () => {
    const { invoice, payment, paymentIntent } = await aPaidByCard();
    stripe.refundFault = 'drop_connection';
    const lost = await gateway.live.api.post(`/payments/${payment.id}/refund`, { amount: 40 });
    stripe.refundFault = null;
    expect(lost.status).toBe(502);

    const status = await stripe.deliverChargeRefunded(stripe.paymentIntents.get(paymentIntent)!);

    expect(status).toBe(200);
    const refunds = await refundsOfPayment(payment.id);
    expect(refunds).toEqual([expect.objectContaining({ amount: 40, status: 'succeeded', gateway_reference: stripe.paymentIntents.get(paymentIntent)!.refunds[0].id })]);
    expect(await readPayment(payment.id)).toMatchObject({ amount_refunded: 40 });
    expect(await readInvoice(invoice.id)).toMatchObject({ amount_paid: 110 });
    expect(await refundsOf(payment.id)).toHaveLength(1);
  });

  test('when charge.refund.updated reports the pending refund made, then it is settled once', async () => {
    const { payment, paymentIntent } = await aPaidByCard();
    stripe.refundFault = 'server_error';
    await gateway.live.api.post(`/payments/${payment.id}/refund`, { amount: 25 });

    await stripe.deliverRefundUpdated(stripe.paymentIntents.get(paymentIntent)!.refunds[0].id);
    await stripe.deliverRefundUpdated(stripe.paymentIntents.get(paymentIntent)!.refunds[0].id);

    expect(await readPayment(payment.id)).toMatchObject({ amount_refunded: 25 });
    expect(await refundsOfPayment(payment.id)).toEqual([expect.objectContaining({ status: 'succeeded' })]);
    expect(await refundsOf(payment.id)).toHaveLength(1);
  });

  test('when the reconciliation sweep finds the pending refund at Stripe, then it books it once; a second sweep changes nothing', async () => {
    const { invoice, payment, paymentIntent } = await aPaidByCard();
    stripe.refundFault = 'server_error';
    await gateway.live.api.post(`/payments/${payment.id}/refund`, { amount: 30 });

    await sweepLater();
    await sweepLater();

    expect(stripe.paymentIntents.get(paymentIntent)!.refunds).toHaveLength(1);
    expect(await readPayment(payment.id)).toMatchObject({ amount_refunded: 30 });
    expect(await readInvoice(invoice.id)).toMatchObject({ amount_paid: 120 });
    expect(await refundsOf(payment.id)).toHaveLength(1);
  });

  test('when reading the pending refund back is refused (a key without the permission), then it stays pending with its reservation, and a later sweep books it', async () => {
    // Arrange: Stripe made the refund, its answer was lost
    const { payment, paymentIntent } = await aPaidByCard();
    stripe.refundFault = 'server_error';
    await gateway.live.api.post(`/payments/${payment.id}/refund`, { amount: 30 });
    stripe.failWith = { status: 403, type: 'invalid_request_error', message: 'The provided key does not have the required permissions' };

    // Act
    await sweepLater();
    const meanwhile = await refundsOfPayment(payment.id);
    stripe.failWith = null;
    await sweepLater();

    // Assert
    expect(meanwhile).toEqual([expect.objectContaining({ status: 'pending' })]);
    expect(await refundsOfPayment(payment.id)).toEqual([expect.objectContaining({ status: 'succeeded', gateway_reference: stripe.paymentIntents.get(paymentIntent)!.refunds[0].id })]);
    expect(await readPayment(payment.id)).toMatchObject({ amount_refunded: 30 });
  });

  test('when Stripe could not be reached (nothing made), then the sweep sends the pending refund under its own key, once', async () => {
    const { payment, paymentIntent } = await aPaidByCard();
    stripe.failWith = { status: 500, type: 'api_error', message: 'Stripe is down' };
    const res = await gateway.live.api.post(`/payments/${payment.id}/refund`, { amount: 30 });
    stripe.failWith = null;

    await sweepLater();

    expect(res.status).toBe(502);
    const refunds = stripe.paymentIntents.get(paymentIntent)!.refunds;
    expect(refunds).toEqual([expect.objectContaining({ amount: 3000 })]);
    expect(refunds[0].metadata.invoicing_refund_key).toMatch(/^refund-\d+-\d+$/);
    expect(await readPayment(payment.id)).toMatchObject({ amount_refunded: 30 });
  });
});

describe('a refund made in Stripe\'s dashboard', () => {
  test('when Stripe cannot be read back as charge.refunded arrives, then the refund is recorded from the total, once, and a later report of it gives it its id', async () => {
    // Arrange
    const { payment, paymentIntent } = await aPaidByCard();
    stripe.failWith = { status: 503, type: 'api_error', message: 'Stripe is down' };

    // Act
    await stripe.refundInDashboard(paymentIntent, 2000);
    await stripe.deliverChargeRefunded(stripe.paymentIntents.get(paymentIntent)!);
    stripe.failWith = null;
    const before = await refundsOfPayment(payment.id);
    await stripe.deliverRefundUpdated(stripe.paymentIntents.get(paymentIntent)!.refunds[0].id);

    // Assert
    expect(before).toEqual([expect.objectContaining({ amount: 20, status: 'succeeded', gateway_reference: null })]);
    expect(await refundsOfPayment(payment.id)).toEqual([expect.objectContaining({ id: before[0].id, gateway_reference: stripe.paymentIntents.get(paymentIntent)!.refunds[0].id })]);
    expect(await readPayment(payment.id)).toMatchObject({ amount_refunded: 20 });
    expect(await refundsOf(payment.id)).toHaveLength(1);
  });
});

describe('the reconciliation sweep with several processes', () => {
  test('when two sweeps run at once, then each pending refund is worked by one of them: read back and sent once', async () => {
    // Arrange: three refunds left pending with nothing made at Stripe
    const paid = [await aPaidByCard(), await aPaidByCard(), await aPaidByCard()];
    stripe.failWith = { status: 503, type: 'api_error', message: 'Stripe is down' };
    for (const { payment } of paid) expect((await gateway.live.api.post(`/payments/${payment.id}/refund`, { amount: 10 })).status).toBe(502);
    stripe.failWith = null;
    const sentBefore = stripe.requests.filter((r) => r.method === 'POST' && r.path === '/v1/refunds').length;
    await gateway.app.db.knex('refunds').where({ status: 'pending' }).update({ next_attempt_at: toDbTime(new Date(Date.now() - 1000)) });

    // Act
    const worked = await Promise.all([gateway.app.server.services.refunds.reconcileDue(), gateway.app.server.services.refunds.reconcileDue()]);

    // Assert
    expect(worked[0] + worked[1]).toBe(3);
    expect(stripe.requests.filter((r) => r.method === 'POST' && r.path === '/v1/refunds').length - sentBefore).toBe(3);
    for (const { payment, paymentIntent } of paid) {
      expect(stripe.paymentIntents.get(paymentIntent)!.refunds).toHaveLength(1);
      expect(await refundsOfPayment(payment.id)).toEqual([expect.objectContaining({ status: 'succeeded', amount: 10 })]);
    }
  });
});

describe('the excess of an overpayment', () => {
  test.each([
    ['Stripe could not be reached (the process might as well have died before the call)', { status: 500, type: 'api_error', message: 'Stripe is down' }, null],
    ['Stripe made the refund and its answer was lost', null, 'server_error'],
  ] as const)('when %s, then the sweep refunds the excess exactly once, and a repeated checkout.session.completed refunds nothing more', async (_case, outage, fault) => {
    // Arrange
    const { invoice, sessionId, paymentIntent } = await anOverpaidCheckout();
    stripe.failWith = outage;
    stripe.refundFault = fault;
    await stripe.deliver(sessionId, 'checkout.session.completed');
    stripe.failWith = null;
    const intent = stripe.paymentIntents.get(paymentIntent)!;
    const paymentId = (await readInvoice(invoice.id)).payments.find((p: any) => p.gateway === 'stripe').id;
    expect(await readPayment(paymentId)).toMatchObject({ amount: 150, amount_refunded: 50 }); // reserved, pending

    // Act
    await sweepLater();
    await stripe.deliver(sessionId, 'checkout.session.completed');
    await sweepLater();

    // Assert
    expect(intent.refunds).toEqual([expect.objectContaining({ amount: 5000 })]);
    expect(await readPayment(paymentId)).toMatchObject({ amount_refunded: 50, status: 'succeeded' });
    expect(await readInvoice(invoice.id)).toMatchObject({ status: 'paid', amount_paid: 150 });
    expect(await refundsOfPayment(paymentId)).toEqual([expect.objectContaining({ amount: 50, status: 'succeeded' })]);
  });

  test('when two partial refunds of an overpaid payment race, then the invoice goes down by what the payment had counted, once', async () => {
    // Arrange: Stripe refuses the excess refund, so the payment still holds 50.00 it never counted
    const { invoice, sessionId } = await anOverpaidCheckout();
    stripe.failWith = { status: 400, type: 'invalid_request_error', message: 'Charge has been disputed' };
    await stripe.deliver(sessionId, 'checkout.session.completed');
    stripe.failWith = null;
    const paymentId = (await readInvoice(invoice.id)).payments.find((p: any) => p.gateway === 'stripe').id;

    // Act
    const answers = await Promise.all([1, 2].map(() => gateway.live.api.post(`/payments/${paymentId}/refund`, { amount: 50 })));

    // Assert: the first 50.00 is the excess, the second comes off the invoice
    expect(answers.map((a) => a.status)).toEqual([201, 201]);
    expect(await readPayment(paymentId)).toMatchObject({ amount_refunded: 100 });
    expect(await readInvoice(invoice.id)).toMatchObject({ amount_paid: 100, status: 'partial' });
  });
});

describe('a Stripe refund that fails at the bank', () => {
  test('when charge.refund.updated reports it failed, then the refund is failed, its amount counts as paid again and payment.refund_failed fires once', async () => {
    // Arrange
    const { invoice, payment } = await aPaidByCard();
    const refunded = await gateway.live.api.post(`/payments/${payment.id}/refund`);
    expect(refunded.body.invoice).toMatchObject({ status: 'sent', amount_paid: 0 });

    // Act
    await stripe.failRefundAtBank(refunded.body.refund.gateway_reference);
    await stripe.deliverRefundUpdated(refunded.body.refund.gateway_reference);

    // Assert
    const refund = (await gateway.live.api.get(`/refunds/${refunded.body.refund.id}`)).body.refund;
    expect(refund).toMatchObject({ status: 'failed', failure_reason: expect.stringContaining('expired_or_canceled_card') });
    expect(await readPayment(payment.id)).toMatchObject({ status: 'succeeded', amount_refunded: 0 });
    expect(await readInvoice(invoice.id)).toMatchObject({ status: 'paid', amount_paid: 150 });
    const events = await refundsOf(payment.id, 'payment.refund_failed');
    expect(events).toHaveLength(1);
    expect(events[0].data).toMatchObject({ refund: { id: refund.id, status: 'failed' }, invoice: { status: 'paid' }, payment: { amount_refunded: 0 } });
  });

  test('when a refund made in Stripe\'s dashboard fails at the bank, then it too counts as paid again', async () => {
    // Arrange: the owner refunds 30.00 at Stripe; charge.refunded (without its refunds, as Stripe sends it) records it
    const { invoice, payment, paymentIntent } = await aPaidByCard();
    await stripe.refundInDashboard(paymentIntent, 3000);
    const [recorded] = await refundsOfPayment(payment.id);

    // Act
    await stripe.failRefundAtBank(stripe.paymentIntents.get(paymentIntent)!.refunds[0].id);

    // Assert
    expect(recorded).toMatchObject({ amount: 30, status: 'succeeded', gateway_reference: stripe.paymentIntents.get(paymentIntent)!.refunds[0].id });
    expect(await refundsOfPayment(payment.id)).toEqual([expect.objectContaining({ id: recorded.id, status: 'failed' })]);
    expect(await readPayment(payment.id)).toMatchObject({ amount_refunded: 0 });
    expect(await readInvoice(invoice.id)).toMatchObject({ status: 'paid', amount_paid: 150 });
    expect(await refundsOf(payment.id, 'payment.refund_failed')).toHaveLength(1);
  });
});

describe("a credit note's refund at Stripe", () => {
  test('when a paid invoice is credited in full with refund: true, then Stripe refunds the payment and the invoice is void', async () => {
    // Arrange
    const { invoice, payment, paymentIntent } = await aPaidByCard();

    // Act
    const res = await gateway.live.api.post(`/invoices/${invoice.id}/credit-notes`, { items: invoice.items.map((item: any) => ({ invoice_item_id: item.id })), refund: true });

    // Assert: 150.00 credited, all of it refunded (nothing was due).
    expect(res.status).toBe(201);
    expect(res.body.credit_note).toMatchObject({ total: 150, amount_applied: 0, amount_refunded: 150, refund_ids: [expect.any(Number)] });
    expect(res.body.invoice).toMatchObject({ status: 'void', amount_paid: 0, amount_credited: 150 });
    expect(stripe.paymentIntents.get(paymentIntent)!.refunds).toEqual([expect.objectContaining({ amount: 15000 })]);
    expect(await refundsOfPayment(payment.id)).toEqual([expect.objectContaining({ amount: 150, status: 'succeeded', credit_note_id: res.body.credit_note.id })]);
  });

  test("when Stripe's answer to a credit note's refund is lost, then the credit note is still made with its refund pending, and the reconciliation settles it once", async () => {
    // Arrange
    const { invoice, payment, paymentIntent } = await aPaidByCard();
    stripe.refundFault = 'drop_connection';

    // Act: Design (100.00) credited and refunded.
    const res = await gateway.live.api.post(`/invoices/${invoice.id}/credit-notes`, { items: [{ invoice_item_id: invoice.items[0].id }], refund: true });
    stripe.refundFault = null;
    const pending = await refundsOfPayment(payment.id);
    const settled = await sweepLater();

    // Assert
    expect(res.status).toBe(201);
    expect(res.body.credit_note).toMatchObject({ total: 100, amount_refunded: 100, refund_ids: [pending[0].id] });
    // The pending refund is not booked yet: 150.00 paid and 100.00 credited cover the total.
    expect(res.body.invoice).toMatchObject({ status: 'paid', amount_paid: 150, amount_credited: 100 });
    expect(pending).toEqual([expect.objectContaining({ amount: 100, status: 'pending' })]);
    expect(settled).toBe(1);
    expect(stripe.paymentIntents.get(paymentIntent)!.refunds).toEqual([expect.objectContaining({ amount: 10000 })]);
    expect(await readInvoice(invoice.id)).toMatchObject({ status: 'paid', amount_paid: 50, amount_credited: 100, amount_due: 0 });
    expect(await refundsOf(payment.id)).toHaveLength(1);
  });
});
