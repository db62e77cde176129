/** The Stripe gateway, through the official SDK, with one business's own credentials. */
import type Stripe from 'stripe';
import { fromStripeUnits, toStripeUnits } from '../money/stripe-units';
import {
  CheckoutRequest,
  CheckoutState,
  GatewayCredentialsInput,
  GatewayAmountRefused,
  GatewayNotification,
  GatewayRefund,
  GatewayRefused,
  GatewaySignatureInvalid,
  GatewayUnavailable,
  OpenedCheckout,
  PaymentGateway,
  RefundRequest,
} from './gateway';

/**
 * The SDK, required when it is first used: it is a tenth of a second to load, which a CLI command or
 * a process with no business taking live payments need not pay.
 */
function sdk(): typeof Stripe {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('stripe') as typeof Stripe;
}

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

const CHECKOUT_EVENTS = ['checkout.session.completed', 'checkout.session.async_payment_succeeded', 'checkout.session.async_payment_failed', 'checkout.session.expired'];

/** Stripe's own refund reasons; any other reason travels in the refund's metadata. */
const STRIPE_REFUND_REASONS = ['duplicate', 'fraudulent', 'requested_by_customer'] as const;
type StripeRefundReason = (typeof STRIPE_REFUND_REASONS)[number];

export class StripeGateway implements PaymentGateway {
  private readonly stripe: Stripe;

  constructor(
    private readonly credentials: GatewayCredentialsInput,
    apiUrl: string | undefined,
  ) {
    this.stripe = new (sdk())(credentials.secretKey, stripeClientOptions(apiUrl));
  }

  static accepts(amount: number, currency: string): boolean {
    return toStripeUnits(amount, currency) !== null;
  }

  accepts(amount: number, currency: string): boolean {
    return StripeGateway.accepts(amount, currency);
  }

  async openCheckout(request: CheckoutRequest): Promise<OpenedCheckout> {
    const unitAmount = toStripeUnits(request.amount, request.currency);
    if (unitAmount === null) throw new GatewayAmountRefused(`Stripe cannot charge exactly ${request.amount} minor units of ${request.currency}`);
    const session = await this.call(() =>
      this.stripe.checkout.sessions.create({
        mode: 'payment',
        line_items: [
          {
            quantity: 1,
            price_data: { currency: request.currency.toLowerCase(), unit_amount: unitAmount, product_data: { name: request.description } },
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
    return { sessionId: session.id, url: session.url, expiresAt: new Date(session.expires_at * 1000), livemode: session.livemode };
  }

  async readCheckout(sessionId: string): Promise<CheckoutState> {
    return this.stateOf(await this.call(() => this.stripe.checkout.sessions.retrieve(sessionId)), 'read');
  }

  async expireCheckout(sessionId: string): Promise<void> {
    await this.call(() => this.stripe.checkout.sessions.expire(sessionId)).catch((err: unknown) => {
      // Refused: it is already complete or expired, so nothing is left open. Anything else (Stripe unreachable) is the caller's to log.
      if (!(err instanceof GatewayRefused)) throw err;
    });
  }

  async refund(request: RefundRequest): Promise<GatewayRefund> {
    const stripeReason = STRIPE_REFUND_REASONS.find((reason): reason is StripeRefundReason => reason === request.reason);
    const refund = await this.call(() =>
      this.stripe.refunds.create(
        {
          payment_intent: request.paymentReference,
          amount: refundUnits(request),
          ...(stripeReason ? { reason: stripeReason } : {}),
          // The key travels with the refund, so a refund whose answer was lost can be found again.
          metadata: { [REFUND_KEY_METADATA]: request.idempotencyKey, ...(request.reason && !stripeReason ? { reason: request.reason.slice(0, 500) } : {}) },
        },
        { idempotencyKey: request.idempotencyKey },
      ),
    );
    return refundOf(refund);
  }

  async findRefund(paymentReference: string, idempotencyKey: string, refundReference: string | null): Promise<GatewayRefund | null> {
    if (refundReference) return refundOf(await this.call(() => this.stripe.refunds.retrieve(refundReference)));
    return (await this.listRefunds(paymentReference)).find((refund) => refund.idempotencyKey === idempotencyKey) ?? null;
  }

  async listRefunds(paymentReference: string): Promise<GatewayRefund[]> {
    // Auto-pagination reads every page: a PaymentIntent's refunds are few.
    const refunds = await this.call(() => this.stripe.refunds.list({ payment_intent: paymentReference, limit: 100 }).autoPagingToArray({ limit: 10_000 }));
    return refunds.map(refundOf);
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
      const currency = charge.currency.toUpperCase();
      const amountRefunded = fromStripeUnits(charge.amount_refunded, currency);
      if (amountRefunded === null) return null;
      return { livemode: event.livemode && charge.livemode, kind: 'refunded', refunded: { paymentReference, amountRefunded, currency, refundReference: latest } };
    }
    if (event.type === 'charge.refund.updated') {
      const refund = event.data.object;
      const paymentReference = typeof refund.payment_intent === 'string' ? refund.payment_intent : (refund.payment_intent?.id ?? null);
      return paymentReference ? { livemode: event.livemode, kind: 'refund_updated', paymentReference, refund: refundOf(refund) } : null;
    }
    if (!CHECKOUT_EVENTS.includes(event.type)) return null;
    const session = event.data.object as Stripe.Checkout.Session;
    const checkout = this.stateOf(session, event.type === 'checkout.session.async_payment_failed' ? 'failed' : 'event');
    return { livemode: event.livemode && checkout.livemode, kind: 'checkout', checkout };
  }

  private stateOf(session: Stripe.Checkout.Session, how: 'read' | 'event' | 'failed'): CheckoutState {
    const invoiceId = Number(session.metadata?.invoice_id ?? session.client_reference_id);
    const paymentReference = typeof session.payment_intent === 'string' ? session.payment_intent : (session.payment_intent?.id ?? null);
    const paid = session.payment_status === 'paid' || session.payment_status === 'no_payment_required';
    const currency = session.currency ? session.currency.toUpperCase() : null;
    // A session is `complete` once the client paid, `paid` once the money is taken (later, for a delayed method).
    const outcome = how === 'failed' ? 'failed' : paid ? 'paid' : session.status === 'complete' ? 'pending' : session.status === 'expired' ? 'expired' : 'open';
    return {
      sessionId: session.id,
      invoiceId: Number.isSafeInteger(invoiceId) && invoiceId > 0 ? invoiceId : null,
      outcome,
      livemode: session.livemode,
      paymentReference,
      amount: session.amount_total === null || currency === null ? null : fromStripeUnits(session.amount_total, currency),
      currency,
      ...(how === 'failed' ? { failureReason: 'The delayed payment failed' } : {}),
    };
  }

  /**
   * SDK errors become GatewayUnavailable with Stripe's message; a clear refusal (a 4xx card,
   * invalid-request, authentication or permission error) is GatewayRefused. A network error, a
   * timeout, Stripe's 5xx, a rate limit, a conflict or an idempotency error leave the outcome unknown.
   */
  private async call<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (err) {
      if (!(err instanceof sdk().errors.StripeError)) throw err;
      const message = `Stripe: ${err.type}: ${err.message}`;
      // Stripe's minimum depends on the account's settlement currency, so it is learnt from its answer, not checked ahead.
      if (err.code === 'amount_too_small' || err.code === 'amount_too_large') throw new GatewayAmountRefused(message);
      throw isRefusal(err) ? new GatewayRefused(message) : new GatewayUnavailable(message);
    }
  }
}

/** A refund's amount in Stripe's units; one Stripe cannot make exactly (ISK øre, 0.005 KWD) is refused before any call. */
function refundUnits(request: RefundRequest): number {
  const units = toStripeUnits(request.amount, request.currency);
  if (units === null) throw new GatewayRefused(`Stripe cannot refund exactly ${request.amount} minor units of ${request.currency}`);
  return units;
}

/** Our refund's idempotency key, kept in the Stripe refund's metadata. */
const REFUND_KEY_METADATA = 'invoicing_refund_key';

function isRefusal(err: Stripe.errors.StripeError): boolean {
  const { errors } = sdk();
  if (err instanceof errors.StripeCardError || err instanceof errors.StripeAuthenticationError || err instanceof errors.StripePermissionError) return true;
  return err instanceof errors.StripeInvalidRequestError && [400, 402, 404].includes(err.statusCode ?? 0);
}

/**
 * A Stripe refund as the gateway interface reports it. `pending` and `requires_action` count as
 * made: Stripe has taken the refund on and reports a later failure (`charge.refund.updated`).
 */
function refundOf(refund: Stripe.Refund): GatewayRefund {
  const failed = refund.status === 'failed' || refund.status === 'canceled';
  const amount = fromStripeUnits(refund.amount, refund.currency.toUpperCase());
  if (amount === null) throw new GatewayUnavailable(`Stripe reported refund ${refund.id} in an amount of ${refund.currency.toUpperCase()} that has no exact ISO amount`);
  return {
    refundReference: refund.id,
    amount,
    outcome: failed ? 'failed' : 'succeeded',
    failureReason: failed ? `Stripe: the refund ${refund.status}${refund.failure_reason ? ` (${refund.failure_reason})` : ''}` : null,
    idempotencyKey: refund.metadata?.[REFUND_KEY_METADATA] ?? null,
  };
}
