/**
 * Live card payments through the Stripe double, for the refund tests: a paid invoice, an overpaid
 * one, the reconciliation sweep run as the scheduler would, and reads through the API.
 */
import { toDbTime } from '../../server/db/time';
import { aDraft, eventsOf } from './app';
import { useStripeGateway } from './stripe-double';

export type StripeGateway = ReturnType<typeof useStripeGateway>;

/** Opens the invoice's checkout from its payment page, as the client's browser would; returns the session id. */
export async function openCheckout(gateway: StripeGateway, invoiceId: number): Promise<string> {
  const url = (await gateway.live.api.post(`/invoices/${invoiceId}/initiate-payment`)).body.payment_url as string;
  const html = await (await fetch(url)).text();
  const formToken = /name="form_token" value="([^"]+)"/.exec(html)?.[1] ?? '';
  const answer = await fetch(url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ form_token: formToken }).toString() });
  return /\/checkout\/(cs_live_[0-9a-f]+)/.exec(await answer.text())?.[1] ?? '';
}

/** A live invoice paid through a completed Checkout Session; returns it, its payment and the PaymentIntent id. */
export async function aPaidByCard(gateway: StripeGateway): Promise<{ invoice: any; payment: any; paymentIntent: string }> {
  const invoice = await aDraft(gateway.live);
  const sessionId = await openCheckout(gateway, invoice.id);
  const session = await gateway.stripe.complete(sessionId);
  const read = (await gateway.live.api.get(`/invoices/${invoice.id}`)).body.invoice;
  return { invoice: read, payment: read.payments[0], paymentIntent: session.payment_intent! };
}

/**
 * A live invoice of 150.00 whose client pays its checkout for 150.00 at Stripe just as a bank
 * transfer of 50.00 is recorded: Stripe's `checkout.session.completed`, held back until the test
 * delivers it, brings 50.00 too much.
 */
export async function anOverpaidCheckout(gateway: StripeGateway): Promise<{ invoice: any; sessionId: string; paymentIntent: string }> {
  const invoice = await aDraft(gateway.live);
  const sessionId = await openCheckout(gateway, invoice.id);
  gateway.stripe.holdEvents = true;
  const session = await gateway.stripe.complete(sessionId).finally(() => {
    gateway.stripe.holdEvents = false;
  });
  await gateway.live.api.post(`/invoices/${invoice.id}/payments`, { amount: 50, method: 'bank_transfer' });
  return { invoice, sessionId, paymentIntent: session.payment_intent! };
}

/** The events of `type` about one payment. */
export async function paymentEvents(gateway: StripeGateway, paymentId: number, type = 'payment.refunded') {
  return (await eventsOf(gateway.app, gateway.live.businessId)).filter((e) => e.type === type && e.data.payment.id === paymentId);
}

/** The reconciliation sweep, run as the scheduler runs it once the pending refunds are due (a few minutes later). */
export async function sweepLater(gateway: StripeGateway): Promise<number> {
  await gateway.app.db.knex('refunds').where({ status: 'pending' }).update({ next_attempt_at: toDbTime(new Date(Date.now() - 1000)) });
  return gateway.app.server.services.refunds.reconcileDue();
}
