/** Refunds of Stripe payments: through the SDK's refunds call, from Stripe's dashboard (`charge.refunded`), and the excess of an overpayment. */
import { toDbTime } from '../../server/db/time';
import { aDraft } from '../support/app';
import { useStripeGateway } from '../support/stripe-double';
import { aPaidByCard as paid, openCheckout as open, paymentEvents } from '../support/stripe-payments';

const gateway = useStripeGateway();
const { stripe } = gateway;
afterEach(() => {
  stripe.holdEvents = false;
  stripe.failWith = null;
});

const aPaidByCard = () => paid(gateway);
const openCheckout = (invoiceId: number) => open(gateway, invoiceId);
const refundsOf = (paymentId: number) => paymentEvents(gateway, paymentId);

describe('refunding a Stripe payment', () => {
  test('when part of a card payment is refunded through the API, then Stripe refunds it on the PaymentIntent and the refund carries Stripe\'s id', async () => {
    // Arrange
    const { invoice, payment, paymentIntent } = await aPaidByCard();

    // Act
    const res = await gateway.live.api.post(`/payments/${payment.id}/refund`, { amount: 50, reason: 'requested_by_customer' });

    // Assert
    expect(res.status).toBe(201);
    const atStripe = stripe.paymentIntents.get(paymentIntent)!;
    expect(atStripe.refunds).toEqual([expect.objectContaining({ amount: 5000, reason: 'requested_by_customer' })]);
    expect(res.body.refund).toMatchObject({ amount: 50, status: 'succeeded', gateway_reference: atStripe.refunds[0].id });
    expect(res.body.invoice).toMatchObject({ id: invoice.id, status: 'partial', amount_paid: 100 });
    const request = stripe.requests.find((r) => r.path === '/v1/refunds')!;
    expect(Object.fromEntries(request.params)).toEqual({
      payment_intent: paymentIntent,
      amount: '5000',
      reason: 'requested_by_customer',
      'metadata[invoicing_refund_key]': `refund-${gateway.live.businessId}-${res.body.refund.id}`,
    });
  });

  test('when Stripe then reports the same refund (charge.refunded), then nothing more is recorded', async () => {
    const { payment, paymentIntent } = await aPaidByCard();
    await gateway.live.api.post(`/payments/${payment.id}/refund`, { reason: 'Damaged in transit' });

    const status = await stripe.deliverChargeRefunded(stripe.paymentIntents.get(paymentIntent)!);

    expect(status).toBe(200);
    expect(stripe.paymentIntents.get(paymentIntent)!.refunds[0].metadata).toMatchObject({ reason: 'Damaged in transit' });
    expect((await gateway.live.api.get(`/payments/${payment.id}`)).body.payment).toMatchObject({ status: 'refunded', amount_refunded: 150 });
    expect(await refundsOf(payment.id)).toHaveLength(1);
  });

  test('when a refund asks for an amount Stripe cannot return exactly (0.005 KWD), then it is a 422 on amount and nothing is sent to Stripe', async () => {
    // Arrange: KWD has three decimals, and Stripe takes only amounts ending in 0.
    const invoice = await aDraft(gateway.live, { currency: 'KWD', items: [{ description: 'Consulting', quantity: 1, unit_price: 12.34 }] });
    await stripe.complete(await openCheckout(invoice.id));
    const payment = (await gateway.live.api.get(`/invoices/${invoice.id}`)).body.invoice.payments[0];
    const refundCalls = () => stripe.requests.filter((r) => r.path === '/v1/refunds').length;
    const before = refundCalls();

    // Act
    const res = await gateway.live.api.post(`/payments/${payment.id}/refund`, { amount: 0.005 });

    // Assert
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error: 'validation_failed', errors: { amount: [expect.stringContaining('0.01')] } });
    expect(refundCalls()).toBe(before);
    expect((await gateway.live.api.get(`/refunds?payment_id=${payment.id}`)).body.data).toEqual([]);
    expect((await gateway.live.api.post(`/payments/${payment.id}/refund`, { amount: 0.01 })).status).toBe(201);
  });

  test('when Stripe refuses the refund, then it is a 502 gateway_error and nothing changes', async () => {
    const { invoice, payment } = await aPaidByCard();
    stripe.failWith = { status: 400, type: 'invalid_request_error', message: 'Charge has been disputed' };

    const res = await gateway.live.api.post(`/payments/${payment.id}/refund`);

    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ error: 'gateway_error', message: expect.stringContaining('Charge has been disputed') });
    expect((await gateway.live.api.get(`/invoices/${invoice.id}`)).body.invoice).toMatchObject({ status: 'paid', amount_paid: 150 });
    expect((await gateway.live.api.get(`/payments/${payment.id}`)).body.payment).toMatchObject({ status: 'succeeded', amount_refunded: 0 });
    expect(await refundsOf(payment.id)).toHaveLength(0);
  });

  test('when the owner refunds in Stripe\'s dashboard, then charge.refunded records the refund once, however often it arrives', async () => {
    const { invoice, payment, paymentIntent } = await aPaidByCard();

    await stripe.refundInDashboard(paymentIntent, 3000);
    await stripe.deliverChargeRefunded(stripe.paymentIntents.get(paymentIntent)!);

    expect((await gateway.live.api.get(`/payments/${payment.id}`)).body.payment).toMatchObject({ status: 'succeeded', amount_refunded: 30 });
    expect((await gateway.live.api.get(`/invoices/${invoice.id}`)).body.invoice).toMatchObject({ status: 'partial', amount_paid: 120 });
    const events = await refundsOf(payment.id);
    expect(events).toHaveLength(1);
    expect(events[0].data.refund).toMatchObject({ amount: 30, gateway_reference: expect.stringMatching(/^re_/) });
  });

  test('when money arrives for an invoice voided meanwhile, then the excess is refunded at Stripe at once', async () => {
    // The client paid just before the invoice was voided; Stripe's event arrives after.
    const invoice = await aDraft(gateway.live);
    const sessionId = await openCheckout(invoice.id);
    stripe.holdEvents = true;
    const session = await stripe.complete(sessionId);
    stripe.holdEvents = false;
    await gateway.live.api.post(`/invoices/${invoice.id}/void`);

    await stripe.deliver(sessionId, 'checkout.session.completed');

    const atStripe = stripe.paymentIntents.get(session.payment_intent!)!;
    expect(atStripe.amount_refunded).toBe(15000);
    const read = (await gateway.live.api.get(`/invoices/${invoice.id}`)).body.invoice;
    expect(read).toMatchObject({ status: 'void', amount_paid: 0 });
    expect(read.payments).toEqual([expect.objectContaining({ amount: 150, amount_refunded: 150, status: 'refunded' })]);
  });

  test('when a paid invoice is paid again at Stripe, then the second payment is refunded whole and the invoice stays paid', async () => {
    const invoice = await aDraft(gateway.live);
    const first = await openCheckout(invoice.id);
    const second = await openCheckout(invoice.id);
    expect(second).toBe(first);
    await stripe.complete(first);
    // A second checkout, opened before the first was paid, completed later: Stripe takes the money twice.
    const stale = stripe.session(first);
    stale.status = 'open';
    const again = await stripe.complete(first);

    const read = (await gateway.live.api.get(`/invoices/${invoice.id}`)).body.invoice;
    expect(read).toMatchObject({ status: 'paid', amount_paid: 150 });
    expect(read.payments.map((p: any) => [p.status, p.amount_refunded])).toEqual([['succeeded', 0], ['refunded', 150]]);
    expect(stripe.paymentIntents.get(again.payment_intent!)!.amount_refunded).toBe(15000);
  });
});

describe('a Stripe refund left pending by a process that died', () => {
  test('when the request is retried with its key, then the pending refund is resumed under its own Stripe idempotency key and booked once, with no second reservation', async () => {
    // Arrange: the state a process leaves when it dies after Stripe refunded, before booking it
    const { payment, paymentIntent } = await aPaidByCard();
    const headers = { 'Idempotency-Key': `crash-${payment.id}` };
    const knex = gateway.app.db.knex;
    const now = toDbTime(new Date());
    const [refundId] = await knex('refunds').insert({
      business_id: gateway.live.businessId,
      livemode: 1,
      payment_id: payment.id,
      invoice_id: payment.invoice_id,
      amount: 4000,
      currency: 'USD',
      reason: null,
      status: 'pending',
      gateway: 'stripe',
      request_key: `key_${gateway.live.keyId}:${headers['Idempotency-Key']}`,
      metadata: '{}',
      created_at: now,
      updated_at: now,
    });
    await knex('payments').where({ id: payment.id }).update({ amount_refunded: 4000 });

    // Act
    const res = await gateway.live.api.post(`/payments/${payment.id}/refund`, { amount: 40 }, { headers });

    // Assert
    expect(res.status).toBe(201);
    expect(res.body.refund).toMatchObject({ id: refundId, amount: 40, status: 'succeeded' });
    expect(res.body.payment.amount_refunded).toBe(40);
    expect(stripe.paymentIntents.get(paymentIntent)!.refunds).toHaveLength(1);
  });
});
