/** The Stripe gateway, through the official SDK, with one business's own credentials. */
import Stripe from 'stripe';
import {
  CheckoutRequest,
  CheckoutState,
  GatewayCredentialsInput,
  GatewayNotification,
  GatewaySignatureInvalid,
  GatewayUnavailable,
  OpenedCheckout,
  PaymentGateway,
  RefundRequest,
} from './gateway';

/** `STRIPE_API_URL`: Stripe's own API unless set (tests point it at a local double). */
export function stripeClientOptions(apiUrl: string | undefined): ConstructorParameters<typeof Stripe>[1] {
  if (!apiUrl) return { maxNetworkRetries: 1, timeout: 20_000 };
  const url = new URL(apiUrl);
  return {
    host: url.hostname,
    port: url.port || (url.protocol === 'https:' ? 443 : 80),
    protocol: url.protocol === 'https:' ? 'https' : 'http',
    maxNetworkRetries: 0,
    timeout: 20_000,
    telemetry: false,
  };
}

const CHECKOUT_EVENTS = ['checkout.session.completed', 'checkout.session.async_payment_succeeded', 'checkout.session.async_payment_failed'];

/** Stripe's own refund reasons; any other reason travels in the refund's metadata. */
const STRIPE_REFUND_REASONS = ['duplicate', 'fraudulent', 'requested_by_customer'] as const;
type StripeRefundReason = (typeof STRIPE_REFUND_REASONS)[number];

export class StripeGateway implements PaymentGateway {
  private readonly stripe: Stripe;

  constructor(
    private readonly credentials: GatewayCredentialsInput,
    apiUrl: string | undefined,
  ) {
    this.stripe = new Stripe(credentials.secretKey, stripeClientOptions(apiUrl));
  }

  async openCheckout(request: CheckoutRequest): Promise<OpenedCheckout> {
    const session = await this.call(() =>
      this.stripe.checkout.sessions.create({
        mode: 'payment',
        line_items: [
          {
            quantity: 1,
            price_data: { currency: request.currency.toLowerCase(), unit_amount: request.amount, product_data: { name: request.description } },
          },
        ],
        success_url: request.successUrl,
        cancel_url: request.cancelUrl,
        client_reference_id: String(request.invoiceId),
        metadata: { invoice_id: String(request.invoiceId) },
        payment_intent_data: { metadata: { invoice_id: String(request.invoiceId) } },
      }),
    );
    if (!session.url) throw new GatewayUnavailable('Stripe returned a checkout session without a URL');
    return { sessionId: session.id, url: session.url };
  }

  async readCheckout(sessionId: string): Promise<CheckoutState> {
    return this.stateOf(await this.call(() => this.stripe.checkout.sessions.retrieve(sessionId)), 'read');
  }

  async expireCheckout(sessionId: string): Promise<void> {
    await this.call(() => this.stripe.checkout.sessions.expire(sessionId)).catch((err: unknown) => {
      // Already completed or expired: nothing is left open.
      if (!(err instanceof GatewayUnavailable)) throw err;
    });
  }

  async refund(request: RefundRequest): Promise<{ refundReference: string }> {
    const stripeReason = STRIPE_REFUND_REASONS.find((reason): reason is StripeRefundReason => reason === request.reason);
    const refund = await this.call(() =>
      this.stripe.refunds.create(
        {
          payment_intent: request.paymentReference,
          amount: request.amount,
          ...(stripeReason ? { reason: stripeReason } : {}),
          ...(request.reason && !stripeReason ? { metadata: { reason: request.reason.slice(0, 500) } } : {}),
        },
        { idempotencyKey: request.idempotencyKey },
      ),
    );
    if (refund.status === 'failed' || refund.status === 'canceled') throw new GatewayUnavailable(`Stripe: the refund ${refund.status}`);
    return { refundReference: refund.id };
  }

  readNotification(rawBody: Buffer, signatureHeader: string | undefined): GatewayNotification | null {
    let event: Stripe.Event;
    try {
      event = this.stripe.webhooks.constructEvent(rawBody, signatureHeader ?? '', this.credentials.webhookSecret);
    } catch {
      throw new GatewaySignatureInvalid('The Stripe-Signature header does not verify');
    }
    if (event.type === 'charge.refunded') {
      const charge = event.data.object;
      const paymentReference = typeof charge.payment_intent === 'string' ? charge.payment_intent : (charge.payment_intent?.id ?? null);
      if (!paymentReference) return null;
      const latest = charge.refunds?.data?.[0]?.id ?? null;
      return { kind: 'refunded', refunded: { paymentReference, amountRefunded: charge.amount_refunded, currency: charge.currency.toUpperCase(), refundReference: latest } };
    }
    if (!CHECKOUT_EVENTS.includes(event.type)) return null;
    const session = event.data.object as Stripe.Checkout.Session;
    return { kind: 'checkout', checkout: this.stateOf(session, event.type === 'checkout.session.async_payment_failed' ? 'failed' : 'event') };
  }

  private stateOf(session: Stripe.Checkout.Session, how: 'read' | 'event' | 'failed'): CheckoutState {
    const invoiceId = Number(session.metadata?.invoice_id ?? session.client_reference_id);
    const paymentReference = typeof session.payment_intent === 'string' ? session.payment_intent : (session.payment_intent?.id ?? null);
    const paid = session.payment_status === 'paid' || session.payment_status === 'no_payment_required';
    return {
      sessionId: session.id,
      invoiceId: Number.isSafeInteger(invoiceId) && invoiceId > 0 ? invoiceId : null,
      outcome: how === 'failed' ? 'failed' : paid ? 'paid' : 'pending',
      paymentReference,
      amount: session.amount_total ?? null,
      currency: session.currency ? session.currency.toUpperCase() : null,
      ...(how === 'failed' ? { failureReason: 'The delayed payment failed' } : {}),
    };
  }

  /** SDK errors (refused request, bad key, network) become GatewayUnavailable with Stripe's message. */
  private async call<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (err) {
      if (err instanceof Stripe.errors.StripeError) throw new GatewayUnavailable(`Stripe: ${err.type}: ${err.message}`);
      throw err;
    }
  }
}
