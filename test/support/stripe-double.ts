/**
 * A strict stand-in for Stripe, on 127.0.0.1, for the official SDK pointed at it with
 * STRIPE_API_URL. It speaks the part of Stripe's protocol the product uses and refuses what Stripe
 * would refuse: a wrong secret key (401), unknown parameters, an amount that is not an integer of
 * Stripe's units for the currency or that Stripe's partners cannot take (a three-decimal amount not
 * ending in 0, ISK not in whole krona), an upper-case currency, a mode other than `payment`, missing
 * success or cancel URLs (400, Stripe's error shape). Sessions and events carry the key's mode
 * (livemode false for a test key). A session expires at its `expires_at` (24 hours, or
 * `sessionLifetimeSeconds`) or when expired (`expire`, or the API), posting
 * `checkout.session.expired`; an expired session cannot be paid. It serves a checkout page of its own; paying there completes the
 * session, posts `checkout.session.completed` to the account's webhook URL signed as Stripe signs
 * (the SDK's generateTestHeaderString), and sends the browser to the success URL. Tests can hold
 * events back, send them again, out of order, or forged. Refunds (`POST /v1/refunds`) are checked
 * as Stripe checks them: a PaymentIntent of the account, an integer amount no larger than what is
 * left, a known reason. An Idempotency-Key replays the first answer (a 500 too, as Stripe does), and
 * the same key with other parameters is Stripe's 400 `idempotency_error`. `refundFault` makes the
 * next refund be created and then answered with a 500, or its connection dropped (an unknown
 * outcome). Refunds are read back (`GET /v1/refunds/{id}`, `GET /v1/refunds?payment_intent=`).
 * `refundInDashboard` refunds as the account owner would at Stripe, and posts `charge.refunded`;
 * `failRefundAtBank` fails a made refund and posts `charge.refund.updated`.
 */
import { randomBytes } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { Config } from '../../server/config';
import { startApp, Tenant, TestApp } from './app';
import { freePort } from './net';

export interface DoubleAccount {
  secretKey: string;
  webhookSecret: string;
  webhookUrl: string;
  /** A test-mode key whatever it looks like: the product cannot store an `sk_test_` key any more, but one stored before can be there. */
  testMode?: boolean;
}

export interface DoubleSession {
  id: string;
  object: 'checkout.session';
  mode: 'payment';
  status: 'open' | 'complete' | 'expired';
  payment_status: 'unpaid' | 'paid';
  amount_total: number;
  currency: string;
  client_reference_id: string | null;
  metadata: Record<string, string>;
  payment_intent: string | null;
  success_url: string;
  cancel_url: string;
  url: string;
  livemode: boolean;
  /** Seconds since the epoch; Stripe's default is 24 hours after creation. */
  expires_at: number;
  /** Which account (secret key) opened it. */
  account: string;
}

/** A PaymentIntent a completed checkout made, and what has been refunded on it. */
export interface DoublePaymentIntent {
  id: string;
  amount: number;
  amount_refunded: number;
  currency: string;
  livemode: boolean;
  account: string;
  refunds: DoubleRefund[];
}

export interface DoubleRefund {
  id: string;
  amount: number;
  reason: string | null;
  metadata: Record<string, string>;
  status: 'succeeded' | 'failed';
  failure_reason: string | null;
}

const REFUND_PARAMETERS = ['payment_intent', 'amount', 'reason', 'metadata'];
const REFUND_REASONS = ['duplicate', 'fraudulent', 'requested_by_customer'];

/** Top-level parameters the product may send when creating a session; anything else is refused as Stripe does. */
const KNOWN_PARAMETERS = ['mode', 'line_items', 'success_url', 'cancel_url', 'client_reference_id', 'metadata', 'payment_intent_data'];

/**
 * Stripe's units, kept here apart from the product's table so that a wrong product table fails
 * the tests: zero-decimal and three-decimal currencies; every other one is two-decimal, ISK
 * included (whole krona only), as docs.stripe.com/currencies says.
 */
const ZERO_DECIMAL = ['bif', 'clp', 'djf', 'gnf', 'jpy', 'kmf', 'krw', 'mga', 'pyg', 'rwf', 'ugx', 'vnd', 'vuv', 'xaf', 'xof', 'xpf'];
const THREE_DECIMAL = ['bhd', 'jod', 'kwd', 'omr', 'tnd'];
const decimalsAtStripe = (currency: string) => (ZERO_DECIMAL.includes(currency) ? 0 : THREE_DECIMAL.includes(currency) ? 3 : 2);

/** Refuses, as Stripe does, an amount its card partners cannot take: a three-decimal one not ending in 0, ISK with øre. */
function refuseInexactAmount(amount: number, currency: string, param: string): void {
  if (THREE_DECIMAL.includes(currency) && amount % 10 !== 0) {
    throw new StripeRefusal(400, 'invalid_request_error', `Invalid amount: ${currency.toUpperCase()} amounts must end in 0 (the least significant digit of a three-decimal amount must be 0).`, param);
  }
  if (currency === 'isk' && amount % 100 !== 0) {
    throw new StripeRefusal(400, 'invalid_request_error', 'Invalid amount. Currency ISK has become effectively zero-decimal and charged amounts must be evenly divisible by 100.', param);
  }
}

class StripeRefusal extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly param?: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

/** Stripe's smallest charge in a few currencies (its units): below it, `amount_too_small`. Stripe's largest is eight digits. */
const MINIMUM_CHARGE: Record<string, number> = { usd: 50, eur: 50, gbp: 30, jpy: 50 };
const MAXIMUM_CHARGE = 99_999_999;

const randomId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export class StripeDouble {
  readonly sessions = new Map<string, DoubleSession>();
  readonly paymentIntents = new Map<string, DoublePaymentIntent>();
  /** Idempotency-Key → the first request's parameters and answer, per account. */
  private readonly idempotent = new Map<string, { params: string; status: number; body: unknown }>();
  /** Every event posted to a webhook URL, with the answer's status. */
  readonly delivered: { type: string; sessionId: string; status: number }[] = [];
  /** Every API request, for assertions on what the SDK sent. */
  readonly requests: { method: string; path: string; params: URLSearchParams }[] = [];
  /** While true, completing a checkout sends no event: the test delivers it when it chooses. */
  holdEvents = false;
  /** While true, a completed checkout stays `unpaid` (a delayed payment method) until `settleAsync`. */
  asyncPayments = false;
  /** When set, API calls answer this error instead (an outage, a refusal). */
  failWith: { status: number; type: string; message: string } | null = null;
  /**
   * `server_error`: the next refund is made, then answered with Stripe's 500 (remembered under its
   * key, as Stripe does). `drop_connection`: refunds are made and their connections dropped, the
   * SDK's own retry of a closed connection too, until the test clears it.
   */
  refundFault: 'server_error' | 'drop_connection' | null = null;
  /** How long a new session stays open: Stripe's default 24 hours, or less (Stripe takes 30 minutes to 24 hours). */
  sessionLifetimeSeconds = 24 * 3600;

  private readonly accounts = new Map<string, DoubleAccount>();
  private readonly signer = new Stripe('sk_test_signer_only');
  private server!: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        res.statusCode = 500;
        res.end(String(err));
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** A Stripe account: its secret key, and where its events go, signed with its endpoint secret. */
  account(account: DoubleAccount): void {
    this.accounts.set(account.secretKey, account);
  }

  /** Pays the session as the checkout page would, without a browser; delivers the event unless held. */
  async complete(sessionId: string): Promise<DoubleSession> {
    const session = this.session(sessionId);
    this.expireIfDue(session);
    if (session.status !== 'open') throw new Error(`session ${sessionId} is ${session.status}`);
    session.status = 'complete';
    session.payment_status = this.asyncPayments ? 'unpaid' : 'paid';
    session.payment_intent = randomId('pi');
    this.paymentIntents.set(session.payment_intent, {
      id: session.payment_intent,
      amount: session.amount_total,
      amount_refunded: 0,
      currency: session.currency,
      livemode: session.livemode,
      account: session.account,
      refunds: [],
    });
    if (!this.holdEvents) await this.deliver(sessionId, 'checkout.session.completed');
    return session;
  }

  /** Expires an open session as Stripe does at its `expires_at` (or when asked): it can no longer be paid; `checkout.session.expired` is posted unless held. */
  async expire(sessionId: string): Promise<number | null> {
    const session = this.session(sessionId);
    if (session.status !== 'open') throw new Error(`session ${sessionId} is ${session.status}`);
    session.status = 'expired';
    return this.holdEvents ? null : this.deliver(sessionId, 'checkout.session.expired');
  }

  /** A session whose `expires_at` has passed is expired, whenever it is next looked at. */
  private expireIfDue(session: DoubleSession): void {
    if (session.status === 'open' && session.expires_at <= Math.floor(Date.now() / 1000)) session.status = 'expired';
  }

  /** A delayed payment of a completed session succeeds (or fails): the session's state and its event. */
  async settleAsync(sessionId: string, outcome: 'succeeded' | 'failed'): Promise<number> {
    const session = this.session(sessionId);
    if (outcome === 'succeeded') session.payment_status = 'paid';
    return this.deliver(sessionId, `checkout.session.async_payment_${outcome}`);
  }

  /**
   * Posts an event about the session to its account's webhook URL, signed with the account's secret
   * (or `secret`); `livemode` overrides the mode of the event and its session (a test-mode event).
   */
  async deliver(sessionId: string, type: string, options: { secret?: string; timestamp?: number; livemode?: boolean } = {}): Promise<number> {
    const session = this.session(sessionId);
    const account = this.accounts.get(session.account)!;
    const { account: _account, ...rest } = session;
    const object = { ...rest, livemode: options.livemode ?? session.livemode };
    return this.postEvent(account, type, object, object.livemode, { ...options, sessionId });
  }

  /** Posts an event of `type` about `object` to the account's webhook URL in Stripe's envelope, signed as Stripe signs. */
  private postEvent(
    account: DoubleAccount,
    type: string,
    object: object,
    livemode: boolean,
    options: { secret?: string; timestamp?: number; sessionId?: string } = {},
  ): Promise<number> {
    const payload = JSON.stringify({
      id: randomId('evt'),
      object: 'event',
      api_version: '2025-01-01',
      created: Math.floor(Date.now() / 1000),
      type,
      livemode,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      data: { object },
    });
    const header = this.signer.webhooks.generateTestHeaderString({ payload, secret: options.secret ?? account.webhookSecret, timestamp: options.timestamp });
    return this.post(account.webhookUrl, payload, header, { type, sessionId: options.sessionId ?? '' });
  }

  /** The account owner refunds at Stripe (its dashboard): the PaymentIntent's refund, and `charge.refunded` posted. */
  async refundInDashboard(paymentIntentId: string, amount: number): Promise<number> {
    const intent = this.paymentIntents.get(paymentIntentId);
    if (!intent) throw new Error(`no payment intent ${paymentIntentId}`);
    this.refundOn(intent, amount, null, {});
    return this.deliverChargeRefunded(intent);
  }

  /**
   * Posts `charge.refunded` for the PaymentIntent's charge, as it stands. As in Stripe's API since
   * 2022-11-15, the charge carries no `refunds` list: which refund it was is read back.
   */
  async deliverChargeRefunded(intent: DoublePaymentIntent): Promise<number> {
    const account = this.accounts.get(intent.account)!;
    const charge = {
      id: intent.id.replace(/^pi_/, 'ch_'),
      object: 'charge',
      amount: intent.amount,
      amount_refunded: intent.amount_refunded,
      currency: intent.currency,
      livemode: intent.livemode,
      paid: true,
      payment_intent: intent.id,
      refunded: intent.amount_refunded === intent.amount,
    };
    return this.postEvent(account, 'charge.refunded', charge, intent.livemode);
  }

  /** A made refund fails at the bank, as a closed card's does: the money is back on the charge, and `charge.refund.updated` is posted. */
  async failRefundAtBank(refundId: string, failureReason = 'expired_or_canceled_card'): Promise<number> {
    const { intent, refund } = this.refundById(refundId);
    if (refund.status !== 'succeeded') throw new Error(`refund ${refundId} is ${refund.status}`);
    refund.status = 'failed';
    refund.failure_reason = failureReason;
    intent.amount_refunded -= refund.amount;
    return this.deliverRefundUpdated(refundId);
  }

  /** Posts `charge.refund.updated` for the refund, as it stands. */
  async deliverRefundUpdated(refundId: string): Promise<number> {
    const { intent, refund } = this.refundById(refundId);
    const account = this.accounts.get(intent.account)!;
    return this.postEvent(account, 'charge.refund.updated', this.refundView(intent, refund), intent.livemode);
  }

  refundById(refundId: string): { intent: DoublePaymentIntent; refund: DoubleRefund } {
    for (const intent of this.paymentIntents.values()) {
      const refund = intent.refunds.find((r) => r.id === refundId);
      if (refund) return { intent, refund };
    }
    throw new StripeRefusal(404, 'invalid_request_error', `No such refund: '${refundId}'`, 'id');
  }

  private refundView(intent: DoublePaymentIntent, refund: DoubleRefund) {
    return { object: 'refund', currency: intent.currency, payment_intent: intent.id, charge: intent.id.replace(/^pi_/, 'ch_'), ...refund };
  }

  private refundOn(intent: DoublePaymentIntent, amount: number, reason: string | null, metadata: Record<string, string>) {
    if (amount > intent.amount - intent.amount_refunded) {
      throw new StripeRefusal(400, 'invalid_request_error', `Refund amount (${amount}) is greater than unrefunded amount on charge (${intent.amount - intent.amount_refunded})`, 'amount');
    }
    const refund: DoubleRefund = { id: randomId('re'), amount, reason, metadata, status: 'succeeded', failure_reason: null };
    intent.refunds.push(refund);
    intent.amount_refunded += amount;
    return this.refundView(intent, refund);
  }

  /** Validates a refund as Stripe does. */
  private createRefund(key: string, params: URLSearchParams) {
    for (const name of params.keys()) {
      if (!REFUND_PARAMETERS.includes(name.split('[')[0])) throw new StripeRefusal(400, 'invalid_request_error', `Received unknown parameter: ${name}`, name);
    }
    const intent = this.paymentIntents.get(params.get('payment_intent') ?? '');
    if (!intent || intent.account !== key) throw new StripeRefusal(404, 'invalid_request_error', `No such payment_intent: '${params.get('payment_intent') ?? ''}'`, 'payment_intent');
    const amountText = params.get('amount');
    if (amountText !== null && !/^[1-9][0-9]*$/.test(amountText)) throw new StripeRefusal(400, 'invalid_request_error', 'Invalid integer: amount', 'amount');
    const reason = params.get('reason');
    if (reason !== null && !REFUND_REASONS.includes(reason)) throw new StripeRefusal(400, 'invalid_request_error', `Invalid reason: must be one of ${REFUND_REASONS.join(', ')}`, 'reason');
    if (intent.amount_refunded >= intent.amount) throw new StripeRefusal(400, 'invalid_request_error', `Charge ${intent.id} has already been refunded.`);
    const metadata: Record<string, string> = {};
    for (const [name, value] of params) {
      const match = /^metadata\[([^\]]+)\]$/.exec(name);
      if (match) metadata[match[1]] = value;
    }
    return this.refundOn(intent, amountText === null ? intent.amount - intent.amount_refunded : Number(amountText), reason, metadata);
  }

  /** Posts raw bytes with a given Stripe-Signature header (a forged or replayed event). */
  async post(url: string, payload: string, signature: string, note = { type: 'raw', sessionId: '' }): Promise<number> {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': signature }, body: payload });
    await res.text();
    this.delivered.push({ ...note, status: res.status });
    return res.status;
  }

  session(id: string): DoubleSession {
    const session = this.sessions.get(id);
    if (!session) throw new Error(`no session ${id}`);
    return session;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const body = await readBody(req);
    try {
      if (url.pathname.startsWith('/v1/')) return this.api(req, res, url, new URLSearchParams(req.method === 'GET' ? url.search : body));
      const checkout = /^\/checkout\/(cs_[a-z]+_[0-9a-f]+)$/.exec(url.pathname);
      if (checkout && req.method === 'GET') return this.checkoutPage(res, this.session(checkout[1]));
      if (checkout && req.method === 'POST') {
        const open = this.session(checkout[1]);
        this.expireIfDue(open);
        if (open.status !== 'open') return this.checkoutPage(res, open);
        const session = await this.complete(checkout[1]);
        res.writeHead(303, { location: session.success_url.replace('{CHECKOUT_SESSION_ID}', session.id) }).end();
        return;
      }
      res.writeHead(404).end();
    } catch (err) {
      if (!(err instanceof StripeRefusal)) throw err;
      res.writeHead(err.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { type: err.type, message: err.message, ...(err.param ? { param: err.param } : {}), ...(err.code ? { code: err.code } : {}) } }));
    }
  }

  private api(req: IncomingMessage, res: ServerResponse, url: URL, params: URLSearchParams): void {
    this.requests.push({ method: req.method ?? '', path: url.pathname, params });
    const key = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!key || !this.accounts.has(key)) throw new StripeRefusal(401, 'invalid_request_error', `Invalid API Key provided: ${key ? `${key.slice(0, 8)}…` : 'none'}`);
    if (this.failWith) throw new StripeRefusal(this.failWith.status, this.failWith.type, this.failWith.message);
    const json = (value: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': randomId('req') });
      res.end(JSON.stringify(value));
    };
    const publicView = (session: DoubleSession) => {
      const { account: _account, ...rest } = session;
      return rest;
    };
    if (req.method === 'POST' && url.pathname === '/v1/checkout/sessions') return json(publicView(this.create(key, params)));
    if (req.method === 'POST' && url.pathname === '/v1/refunds') return this.postRefund(req, res, key, params, json);
    if (req.method === 'GET' && url.pathname === '/v1/refunds') {
      const intent = this.paymentIntents.get(params.get('payment_intent') ?? '');
      if (!intent || intent.account !== key) throw new StripeRefusal(404, 'invalid_request_error', `No such payment_intent: '${params.get('payment_intent') ?? ''}'`, 'payment_intent');
      return json({ object: 'list', url: '/v1/refunds', has_more: false, data: [...intent.refunds].reverse().map((r) => this.refundView(intent, r)) });
    }
    const oneRefund = /^\/v1\/refunds\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'GET' && oneRefund) {
      const { intent, refund } = this.refundById(oneRefund[1]);
      if (intent.account !== key) throw new StripeRefusal(404, 'invalid_request_error', `No such refund: '${oneRefund[1]}'`, 'id');
      return json(this.refundView(intent, refund));
    }
    const one = /^\/v1\/checkout\/sessions\/([^/]+)(\/expire)?$/.exec(url.pathname);
    const session = one ? this.sessions.get(one[1]) : undefined;
    if (!one || !session || session.account !== key) throw new StripeRefusal(404, 'invalid_request_error', `No such checkout.session: '${one?.[1] ?? ''}'`);
    this.expireIfDue(session);
    if (req.method === 'GET' && !one[2]) return json(publicView(session));
    if (req.method === 'POST' && one[2]) {
      if (session.status !== 'open') throw new StripeRefusal(400, 'invalid_request_error', `Only Checkout Sessions with a status in ["open"] can be expired. This Checkout Session has a status of "${session.status}".`);
      session.status = 'expired';
      json(publicView(session));
      // Stripe posts checkout.session.expired after answering; a test that stops the app first loses it, as Stripe's retry would be lost.
      if (!this.holdEvents) this.deliver(session.id, 'checkout.session.expired').catch(() => undefined);
      return;
    }
    throw new StripeRefusal(404, 'invalid_request_error', 'Unrecognized request URL');
  }

  /**
   * `POST /v1/refunds` under Stripe's idempotency rules: the first answer of a key (a 500 too) is
   * replayed; the key with other parameters is a 400 `idempotency_error`; a refused request is not
   * remembered. `refundFault` makes the refund, then answers 500 or drops the connection.
   */
  private postRefund(req: IncomingMessage, res: ServerResponse, key: string, params: URLSearchParams, json: (value: unknown) => void): void {
    const idempotencyKey = req.headers['idempotency-key'];
    const remembered = typeof idempotencyKey === 'string' ? `${key}:${idempotencyKey}` : undefined;
    const sent = [...params].map(([name, value]) => `${name}=${value}`).sort().join('&');
    const earlier = remembered ? this.idempotent.get(remembered) : undefined;
    if (earlier && earlier.params !== sent) {
      throw new StripeRefusal(400, 'idempotency_error', `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${String(idempotencyKey)}' if you meant to execute a different request.`);
    }
    if (earlier && this.refundFault === 'drop_connection') {
      req.socket.destroy();
      return;
    }
    if (earlier) {
      res.writeHead(earlier.status, { 'content-type': 'application/json', 'idempotent-replayed': 'true' });
      res.end(JSON.stringify(earlier.body));
      return;
    }
    const refund = this.createRefund(key, params);
    const fault = this.refundFault;
    if (fault === 'server_error') this.refundFault = null;
    const answer = fault === 'server_error' ? { status: 500, body: { error: { type: 'api_error', message: 'An unknown error occurred' } } } : { status: 200, body: refund };
    if (remembered) this.idempotent.set(remembered, { params: sent, ...answer });
    if (fault === 'drop_connection') {
      req.socket.destroy();
      return;
    }
    if (answer.status !== 200) {
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer.body));
      return;
    }
    json(refund);
  }

  /** Validates the parameters as Stripe does for a one-line payment-mode session. */
  private create(key: string, params: URLSearchParams): DoubleSession {
    for (const name of params.keys()) {
      const top = name.split('[')[0];
      if (!KNOWN_PARAMETERS.includes(top)) throw new StripeRefusal(400, 'invalid_request_error', `Received unknown parameter: ${name}`, name);
    }
    if (params.get('mode') !== 'payment') throw new StripeRefusal(400, 'invalid_request_error', 'mode must be payment here', 'mode');
    for (const name of ['success_url', 'cancel_url']) {
      const value = params.get(name);
      if (!value || !/^https?:\/\//.test(value)) throw new StripeRefusal(400, 'invalid_request_error', `Missing or invalid ${name}`, name);
    }
    const currency = params.get('line_items[0][price_data][currency]') ?? '';
    if (!/^[a-z]{3}$/.test(currency)) throw new StripeRefusal(400, 'invalid_request_error', `Invalid currency: ${currency}`, 'line_items[0][price_data][currency]');
    const unitAmount = params.get('line_items[0][price_data][unit_amount]') ?? '';
    if (!/^[1-9][0-9]*$/.test(unitAmount)) throw new StripeRefusal(400, 'invalid_request_error', 'Invalid integer: unit_amount', 'line_items[0][price_data][unit_amount]');
    const quantity = Number(params.get('line_items[0][quantity]') ?? '0');
    if (!Number.isInteger(quantity) || quantity < 1) throw new StripeRefusal(400, 'invalid_request_error', 'Invalid quantity', 'line_items[0][quantity]');
    refuseInexactAmount(Number(unitAmount) * quantity, currency, 'line_items[0][price_data][unit_amount]');
    if (Number(unitAmount) * quantity < (MINIMUM_CHARGE[currency] ?? 0)) {
      throw new StripeRefusal(400, 'invalid_request_error', `The Checkout Session's total amount due must add up to at least ${MINIMUM_CHARGE[currency]} ${currency}`, undefined, 'amount_too_small');
    }
    if (Number(unitAmount) * quantity > MAXIMUM_CHARGE) {
      throw new StripeRefusal(400, 'invalid_request_error', 'The Checkout Session\'s total amount due must be no more than 99999999', undefined, 'amount_too_large');
    }
    if (!params.get('line_items[0][price_data][product_data][name]')) throw new StripeRefusal(400, 'invalid_request_error', 'Missing product name', 'line_items[0][price_data][product_data][name]');
    if (params.has('line_items[1][quantity]')) throw new StripeRefusal(400, 'invalid_request_error', 'one line item expected here');

    const metadata: Record<string, string> = {};
    for (const [name, value] of params) {
      const match = /^metadata\[([^\]]+)\]$/.exec(name);
      if (match) metadata[match[1]] = value;
    }
    // Stripe's mode is the key's: a test key's sessions and events carry livemode false.
    const livemode = /^(sk|rk)_live_/.test(key) && !this.accounts.get(key)?.testMode;
    const id = randomId(livemode ? 'cs_live' : 'cs_test').replace(/^cs_(live|test)_/, `cs_$1_`);
    const session: DoubleSession = {
      id,
      object: 'checkout.session',
      mode: 'payment',
      status: 'open',
      payment_status: 'unpaid',
      amount_total: Number(unitAmount) * quantity,
      currency,
      client_reference_id: params.get('client_reference_id'),
      metadata,
      payment_intent: null,
      success_url: params.get('success_url')!,
      cancel_url: params.get('cancel_url')!,
      url: `${this.url}/checkout/${id}`,
      livemode,
      expires_at: Math.floor(Date.now() / 1000) + this.sessionLifetimeSeconds,
      account: key,
    };
    this.sessions.set(id, session);
    return session;
  }

  private checkoutPage(res: ServerResponse, session: DoubleSession): void {
    const decimals = decimalsAtStripe(session.currency);
    const amount = `${(session.amount_total / 10 ** decimals).toFixed(decimals)} ${session.currency.toUpperCase()}`;
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(
      `<!DOCTYPE html><html><head><title>Stripe double checkout</title></head><body><h1>Checkout (test double)</h1><p>Amount: ${amount}</p>` +
        (session.status === 'open' ? `<form method="post"><button type="submit">Pay with test card</button></form>` : `<p>This session is ${session.status}.</p>`) +
        `</body></html>`,
    );
  }
}

/**
 * For a test file: the Stripe double, an app whose SDK talks to it (BASE_URL is where a browser
 * reaches the app), and a live-mode tenant whose business has a Stripe gateway whose events the
 * double delivers to the app.
 */
export function useStripeGateway(overrides: Partial<Config> = {}): { stripe: StripeDouble; app: TestApp; live: Tenant } {
  const account = { secretKey: `sk_live_${randomBytes(12).toString('hex')}`, webhookSecret: `whsec_${randomBytes(12).toString('hex')}` };
  const ctx = { stripe: new StripeDouble() } as { stripe: StripeDouble; app: TestApp; live: Tenant };
  beforeAll(async () => {
    await ctx.stripe.start();
    const port = await freePort();
    ctx.app = await startApp({ ...overrides, port, baseUrl: `http://127.0.0.1:${port}`, stripeApiUrl: ctx.stripe.url });
    ctx.live = await ctx.app.tenant({ mode: 'live' });
    await ctx.app.server.services.gateways.set(ctx.live.businessId, { provider: 'stripe', ...account });
    ctx.stripe.account({ ...account, webhookUrl: `${ctx.app.url}/gateway/stripe/${ctx.live.businessId}/webhook` });
  });
  afterAll(async () => {
    await ctx.app?.stop();
    await ctx.stripe.stop();
  });
  return ctx;
}
