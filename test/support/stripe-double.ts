/**
 * A strict stand-in for Stripe, on 127.0.0.1, for the official SDK pointed at it with
 * STRIPE_API_URL. It speaks the part of Stripe's protocol the product uses and refuses what Stripe
 * would refuse: a wrong secret key (401), unknown parameters, an amount that is not an integer of
 * minor units, an upper-case currency, a mode other than `payment`, missing success or cancel URLs
 * (400, Stripe's error shape). It serves a checkout page of its own; paying there completes the
 * session, posts `checkout.session.completed` to the account's webhook URL signed as Stripe signs
 * (the SDK's generateTestHeaderString), and sends the browser to the success URL. Tests can hold
 * events back, send them again, out of order, or forged. Refunds (`POST /v1/refunds`) are checked
 * as Stripe checks them: a PaymentIntent of the account, an integer amount no larger than what is
 * left, a known reason; an Idempotency-Key replays the first answer. `refundInDashboard` refunds as
 * the account owner would at Stripe, and posts `charge.refunded`.
 */
import { randomBytes } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { startApp, Tenant, TestApp } from './app';
import { freePort } from './net';

export interface DoubleAccount {
  secretKey: string;
  webhookSecret: string;
  webhookUrl: string;
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
  refunds: { id: string; amount: number; reason: string | null; metadata: Record<string, string> }[];
}

const REFUND_PARAMETERS = ['payment_intent', 'amount', 'reason', 'metadata'];
const REFUND_REASONS = ['duplicate', 'fraudulent', 'requested_by_customer'];

/** Top-level parameters the product may send when creating a session; anything else is refused as Stripe does. */
const KNOWN_PARAMETERS = ['mode', 'line_items', 'success_url', 'cancel_url', 'client_reference_id', 'metadata', 'payment_intent_data'];

class StripeRefusal extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly param?: string,
  ) {
    super(message);
  }
}

const randomId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export class StripeDouble {
  readonly sessions = new Map<string, DoubleSession>();
  readonly paymentIntents = new Map<string, DoublePaymentIntent>();
  /** Idempotency-Key → the first answer's body, per account. */
  private readonly idempotent = new Map<string, unknown>();
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

  /** A delayed payment of a completed session succeeds (or fails): the session's state and its event. */
  async settleAsync(sessionId: string, outcome: 'succeeded' | 'failed'): Promise<number> {
    const session = this.session(sessionId);
    if (outcome === 'succeeded') session.payment_status = 'paid';
    return this.deliver(sessionId, `checkout.session.async_payment_${outcome}`);
  }

  /** Posts an event about the session to its account's webhook URL, signed with the account's secret (or `secret`). */
  async deliver(sessionId: string, type: string, options: { secret?: string; timestamp?: number } = {}): Promise<number> {
    const session = this.session(sessionId);
    const account = this.accounts.get(session.account)!;
    const { account: _account, ...object } = session;
    const payload = JSON.stringify({
      id: randomId('evt'),
      object: 'event',
      api_version: '2025-01-01',
      created: Math.floor(Date.now() / 1000),
      type,
      livemode: session.livemode,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      data: { object },
    });
    const header = this.signer.webhooks.generateTestHeaderString({ payload, secret: options.secret ?? account.webhookSecret, timestamp: options.timestamp });
    return this.post(account.webhookUrl, payload, header, { type, sessionId });
  }

  /** The account owner refunds at Stripe (its dashboard): the PaymentIntent's refund, and `charge.refunded` posted. */
  async refundInDashboard(paymentIntentId: string, amount: number): Promise<number> {
    const intent = this.paymentIntents.get(paymentIntentId);
    if (!intent) throw new Error(`no payment intent ${paymentIntentId}`);
    this.refundOn(intent, amount, null, {});
    return this.deliverChargeRefunded(intent);
  }

  /** Posts `charge.refunded` for the PaymentIntent's charge, as it stands. */
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
      refunds: { object: 'list', data: [...intent.refunds].reverse().map((r) => ({ id: r.id, object: 'refund', amount: r.amount, status: 'succeeded' })), has_more: false },
    };
    const payload = JSON.stringify({
      id: randomId('evt'),
      object: 'event',
      api_version: '2025-01-01',
      created: Math.floor(Date.now() / 1000),
      type: 'charge.refunded',
      livemode: intent.livemode,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      data: { object: charge },
    });
    const header = this.signer.webhooks.generateTestHeaderString({ payload, secret: account.webhookSecret });
    return this.post(account.webhookUrl, payload, header, { type: 'charge.refunded', sessionId: '' });
  }

  private refundOn(intent: DoublePaymentIntent, amount: number, reason: string | null, metadata: Record<string, string>) {
    if (amount > intent.amount - intent.amount_refunded) {
      throw new StripeRefusal(400, 'invalid_request_error', `Refund amount (${amount}) is greater than unrefunded amount on charge (${intent.amount - intent.amount_refunded})`, 'amount');
    }
    const refund = { id: randomId('re'), amount, reason, metadata };
    intent.refunds.push(refund);
    intent.amount_refunded += amount;
    return { id: refund.id, object: 'refund', amount, currency: intent.currency, payment_intent: intent.id, reason, metadata, status: 'succeeded' };
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
        const session = await this.complete(checkout[1]);
        res.writeHead(303, { location: session.success_url.replace('{CHECKOUT_SESSION_ID}', session.id) }).end();
        return;
      }
      res.writeHead(404).end();
    } catch (err) {
      if (!(err instanceof StripeRefusal)) throw err;
      res.writeHead(err.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { type: err.type, message: err.message, ...(err.param ? { param: err.param } : {}) } }));
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
    if (req.method === 'POST' && url.pathname === '/v1/refunds') {
      const idempotencyKey = req.headers['idempotency-key'];
      const remembered = typeof idempotencyKey === 'string' ? `${key}:${idempotencyKey}` : undefined;
      if (remembered && this.idempotent.has(remembered)) return json(this.idempotent.get(remembered));
      const refund = this.createRefund(key, params);
      if (remembered) this.idempotent.set(remembered, refund);
      return json(refund);
    }
    const one = /^\/v1\/checkout\/sessions\/([^/]+)(\/expire)?$/.exec(url.pathname);
    const session = one ? this.sessions.get(one[1]) : undefined;
    if (!one || !session || session.account !== key) throw new StripeRefusal(404, 'invalid_request_error', `No such checkout.session: '${one?.[1] ?? ''}'`);
    if (req.method === 'GET' && !one[2]) return json(publicView(session));
    if (req.method === 'POST' && one[2]) {
      if (session.status !== 'open') throw new StripeRefusal(400, 'invalid_request_error', `Only Checkout Sessions with a status in ["open"] can be expired. This Checkout Session has a status of "${session.status}".`);
      session.status = 'expired';
      return json(publicView(session));
    }
    throw new StripeRefusal(404, 'invalid_request_error', 'Unrecognized request URL');
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
    if (!params.get('line_items[0][price_data][product_data][name]')) throw new StripeRefusal(400, 'invalid_request_error', 'Missing product name', 'line_items[0][price_data][product_data][name]');
    if (params.has('line_items[1][quantity]')) throw new StripeRefusal(400, 'invalid_request_error', 'one line item expected here');

    const metadata: Record<string, string> = {};
    for (const [name, value] of params) {
      const match = /^metadata\[([^\]]+)\]$/.exec(name);
      if (match) metadata[match[1]] = value;
    }
    const livemode = key.startsWith('sk_live_');
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
      account: key,
    };
    this.sessions.set(id, session);
    return session;
  }

  private checkoutPage(res: ServerResponse, session: DoubleSession): void {
    const amount = `${(session.amount_total / 100).toFixed(2)} ${session.currency.toUpperCase()}`;
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
export function useStripeGateway(): { stripe: StripeDouble; app: TestApp; live: Tenant } {
  const account = { secretKey: `sk_live_${randomBytes(12).toString('hex')}`, webhookSecret: `whsec_${randomBytes(12).toString('hex')}` };
  const ctx = { stripe: new StripeDouble() } as { stripe: StripeDouble; app: TestApp; live: Tenant };
  beforeAll(async () => {
    await ctx.stripe.start();
    const port = await freePort();
    ctx.app = await startApp({ port, baseUrl: `http://127.0.0.1:${port}`, stripeApiUrl: ctx.stripe.url });
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
