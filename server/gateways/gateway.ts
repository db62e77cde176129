/**
 * What the product needs from a payment gateway, whichever it is: open a hosted checkout, read it
 * back, expire it, and turn a signed notification into a fact about a checkout. Another provider
 * is one new file implementing this.
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

export interface GatewayCredentialsInput {
  secretKey: string;
  webhookSecret: string;
}

export interface PaymentGateway {
  openCheckout(request: CheckoutRequest): Promise<OpenedCheckout>;
  readCheckout(sessionId: string): Promise<CheckoutState>;
  expireCheckout(sessionId: string): Promise<void>;
  /**
   * Verifies a notification against the webhook secret (throws `GatewaySignatureInvalid`) and
   * returns the checkout it concerns, or null for an event the product does not act on.
   */
  checkoutOfNotification(rawBody: Buffer, signatureHeader: string | undefined): CheckoutState | null;
}

/** A notification whose signature does not verify: answered 400, nothing recorded. */
export class GatewaySignatureInvalid extends Error {}

/** The gateway refused or could not be reached: the client gets a page, the business a log line. */
export class GatewayUnavailable extends Error {}
