/**
 * What the product needs from a payment gateway, whichever it is: open a hosted checkout, read it
 * back, expire it, refund a payment, and turn a signed notification into a fact about a checkout
 * or a refund. Another provider is one new file implementing this.
 */

/** The checkout to open: the amount due of one invoice. */
export interface CheckoutRequest {
  invoiceId: number;
  /** Minor units. */
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
}

/** A checkout as the gateway reports it. */
export interface CheckoutState {
  sessionId: string;
  invoiceId: number | null;
  /** `paid`: the money is taken; `failed`: a delayed payment method failed; `pending`: neither yet. */
  outcome: 'paid' | 'pending' | 'failed';
  /** The gateway's id of the payment itself (unique per payment): the payment's `gateway_reference`. */
  paymentReference: string | null;
  /** Minor units actually charged, and in which currency (upper-case). */
  amount: number | null;
  currency: string | null;
  failureReason?: string;
}

/** A refund to make at the gateway, of (part of) one of its payments. */
export interface RefundRequest {
  /** The payment's `gateway_reference`. */
  paymentReference: string;
  /** Minor units. */
  amount: number;
  reason: string | null;
  /** The same key for a retry of the same refund: the gateway makes it once. */
  idempotencyKey: string;
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

export type GatewayNotification = { kind: 'checkout'; checkout: CheckoutState } | { kind: 'refunded'; refunded: RefundedPayment };

export interface GatewayCredentialsInput {
  secretKey: string;
  webhookSecret: string;
}

export interface PaymentGateway {
  openCheckout(request: CheckoutRequest): Promise<OpenedCheckout>;
  readCheckout(sessionId: string): Promise<CheckoutState>;
  expireCheckout(sessionId: string): Promise<void>;
  /** Refunds at the gateway; returns the gateway's refund id. Throws GatewayUnavailable when refused. */
  refund(request: RefundRequest): Promise<{ refundReference: string }>;
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
