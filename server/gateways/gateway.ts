/**
 * What the product needs from a payment gateway, whichever it is: open a hosted checkout, read it
 * back, expire it, refund a payment, and turn a signed notification into a fact about a checkout
 * or a refund. Another provider is one new file implementing this.
 */

/** The checkout to open: the amount due of one invoice. */
export interface CheckoutRequest {
  invoiceId: number;
  /** ISO 4217 minor units; the gateway converts them to its own. */
  amount: number;
  /** ISO 4217, upper-case. */
  currency: string;
  description: string;
  /** Where the client returns after paying; `{CHECKOUT_SESSION_ID}` is replaced by the gateway. */
  successUrl: string;
  cancelUrl: string;
}

export interface OpenedCheckout {
  sessionId: string;
  url: string;
  /** When the gateway stops taking payment on it. */
  expiresAt: Date;
  /** False when the credentials are test-mode ones: such a checkout takes no real money. */
  livemode: boolean;
}

/** A checkout as the gateway reports it. */
export interface CheckoutState {
  sessionId: string;
  invoiceId: number | null;
  /**
   * `open`: not paid, and still taking payment; `pending`: paid with a delayed method whose money is
   * not taken yet; `paid`: the money is taken; `failed`: the delayed payment failed; `expired`: it
   * closed unpaid and can no longer be paid.
   */
  outcome: 'open' | 'pending' | 'paid' | 'failed' | 'expired';
  /** False for a test-mode checkout: it never settles an invoice. */
  livemode: boolean;
  /** The gateway's id of the payment itself (unique per payment): the payment's `gateway_reference`. */
  paymentReference: string | null;
  /** ISO 4217 minor units actually charged (null when none, or not expressible in them), and in which currency (upper-case). */
  amount: number | null;
  currency: string | null;
  failureReason?: string;
}

/** A refund to make at the gateway, of (part of) one of its payments. */
export interface RefundRequest {
  /** The payment's `gateway_reference`. */
  paymentReference: string;
  /** ISO 4217 minor units of `currency`; the gateway converts them to its own. */
  amount: number;
  /** ISO 4217, upper-case: the payment's. */
  currency: string;
  reason: string | null;
  /** The same key for a retry of the same refund: the gateway makes it once. */
  idempotencyKey: string;
}

/** One refund at the gateway, as it answers a refund or reads one back. */
export interface GatewayRefund {
  refundReference: string;
  /** Minor units. */
  amount: number;
  /**
   * `succeeded`: the gateway made it (it may still be on its way to the bank, which can fail it
   * later); `failed`: refused, cancelled, or failed at the bank: nothing was returned.
   */
  outcome: 'succeeded' | 'failed';
  failureReason: string | null;
  /** The idempotency key this product made it under (the gateway keeps it on the refund); null for one made elsewhere. */
  idempotencyKey: string | null;
}

/** Money returned on one of the gateway's payments, as its notification reports it (a refund made in its own dashboard too). */
export interface RefundedPayment {
  paymentReference: string;
  /** Minor units refunded on that payment in all, so far. */
  amountRefunded: number;
  currency: string;
  /** The gateway's id of the latest refund, when it says. */
  refundReference: string | null;
}

/** `livemode` false: a test-mode event, which never settles anything. */
export type GatewayNotification = { livemode: boolean } & (
  | { kind: 'checkout'; checkout: CheckoutState }
  | { kind: 'refunded'; refunded: RefundedPayment }
  /** One refund changed at the gateway (it succeeded, or failed at the bank). */
  | { kind: 'refund_updated'; paymentReference: string; refund: GatewayRefund }
);

export interface GatewayCredentialsInput {
  secretKey: string;
  webhookSecret: string;
}

export interface PaymentGateway {
  /** Whether the gateway can charge exactly this amount (ISO minor units) in this currency: it is never rounded. */
  accepts(amount: number, currency: string): boolean;
  /** Throws GatewayUnavailable for an amount it does not accept, before any call. */
  openCheckout(request: CheckoutRequest): Promise<OpenedCheckout>;
  readCheckout(sessionId: string): Promise<CheckoutState>;
  expireCheckout(sessionId: string): Promise<void>;
  /**
   * Refunds at the gateway. Throws GatewayRefused when the gateway clearly refused (nothing was
   * made); any other error (a timeout, a dropped connection, the gateway's own 5xx) leaves the
   * outcome unknown: the refund may exist, so only the same idempotency key may ask again.
   */
  refund(request: RefundRequest): Promise<GatewayRefund>;
  /**
   * Reads back the refund made under `idempotencyKey` on a payment (by its id when known), or
   * null when the gateway has none: it was never made.
   */
  findRefund(paymentReference: string, idempotencyKey: string, refundReference: string | null): Promise<GatewayRefund | null>;
  /** Every refund of one of the gateway's payments, made here or in its own dashboard, read back. */
  listRefunds(paymentReference: string): Promise<GatewayRefund[]>;
  /**
   * Verifies a notification against the webhook secret (throws `GatewaySignatureInvalid`) and
   * returns what it reports, or null for an event the product does not act on.
   */
  readNotification(rawBody: Buffer, signatureHeader: string | undefined): GatewayNotification | null;
}

/** A notification whose signature does not verify: answered 400, nothing recorded. */
export class GatewaySignatureInvalid extends Error {}

/** The gateway refused or could not be reached: the client gets a page, the business a log line. */
export class GatewayUnavailable extends Error {}

/** The gateway clearly refused the request (a 4xx card or invalid-request error): nothing was made. */
export class GatewayRefused extends GatewayUnavailable {}

/**
 * The gateway will never charge this amount (below its minimum, above its maximum, or not exact
 * in its units): the client is told so, not asked to try again later.
 */
export class GatewayAmountRefused extends GatewayRefused {}
