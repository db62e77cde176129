/**
 * A WooCommerce store for tests: a real HTTP(S) server on 127.0.0.1 answering the parts of the
 * REST API v3 a bridge uses (orders, order notes, webhooks, system status) the way WooCommerce and
 * WordPress answer them, authenticating exactly as WooCommerce does and delivering webhooks the
 * way WC_Webhook does, with switches to make the store or its deliveries misbehave. Its owner can
 * sign in and grant an app a key through WooCommerce's app authorization pages (/wc-auth/v1/…).
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { AddressInfo } from 'node:net';
import { ApiKeys, AuthKind, KeyPermissions, presentedKind, randHash, WooApiKey, WooAuthenticator, WpError } from './auth';
import {
  applyStatus, buildOrder, BillingAddress, Address, currencyDecimals, IdSource, ORDER_STATUSES, OrderInput, OrderNote, OrderStatus,
  renderOrder, statusTransitionNote, StoredOrder, TaxRate, toMinor, totalsOf, Money, WC_VERSION, WooOrder, WP_VERSION, wholeSeconds,
} from './orders';
import { parseRestDate, parseStr, PhpArray, phpToPlain, wpDate, wpJsonEncode } from './php';
import { selfSignedCertificate } from './tls';
import { CallbackAttempt, WcAuth, wcAuthRoute } from './wc-auth';
import { Deliverer, Delivery, isValidDeliveryUrl, isValidTopic, topicParts, WEBHOOK_STATUSES, WebhookState, WebhookStatus } from './webhooks';
import { PageReply, PageRequest, WordPress } from './wordpress';

export interface WooStoreOptions {
  /** Serve TLS with a self-signed certificate (see `store.ca`); WooCommerce then takes Basic auth. */
  https?: boolean;
  /** Default: `ck_` + 40 hex, as WooCommerce generates. */
  consumerKey?: string;
  /** Default: `cs_` + 40 hex. */
  consumerSecret?: string;
  /** The key's rights (WooCommerce > Settings > Advanced > REST API); default read_write. */
  permissions?: KeyPermissions;
  /** The store currency: settings.currency and the default of `addOrder`; default EUR. */
  currency?: string;
  /**
   * The site's offset from UTC, in which date_created, date_modified… are printed (the *_gmt fields
   * are UTC). Default +120 (Europe/Paris in summer) so that a client mixing the two is caught.
   */
  utcOffsetMinutes?: number;
  /** How long a webhook delivery may take before it counts as failed; WooCommerce allows 60 s. */
  deliveryTimeoutMs?: number;
  /** The administrator's user name (WordPress user 1), who signs in to authorize an app; default `admin`. */
  adminUsername?: string;
  /** The administrator's password; default a random one (see `store.adminPassword`). */
  adminPassword?: string;
  /**
   * Let an app authorization POST its key to an http:// callback_url. WooCommerce refuses any
   * callback not over SSL ("The callback_url needs to be over SSL"), and so does the store by
   * default; a test whose callback runs over plain http on 127.0.0.1 turns this on.
   */
  allowHttpCallback?: boolean;
  /** PEM certificate(s) the store trusts for an https callback_url (e.g. a test server's self-signed one). */
  callbackCa?: string;
}

/** One request the store received. */
export interface RecordedRequest {
  method: string;
  /** Decoded path, e.g. /wp-json/wc/v3/orders. */
  path: string;
  /** The query string as PHP parsed it. */
  query: Record<string, unknown>;
  /** The credentials the client presented, whether or not they were accepted. */
  auth: AuthKind;
  status: number;
  at: Date;
}

/** Fields `store.updateOrder()` and PUT /orders/{id} change. */
export interface OrderChanges {
  status?: OrderStatus;
  /** Merged by key (or by id when given), like WC_Data::update_meta_data(). */
  meta_data?: { id?: number; key: string; value: unknown }[];
  customer_note?: string;
  transaction_id?: string;
  payment_method?: string;
  payment_method_title?: string;
  billing?: Partial<BillingAddress>;
  shipping?: Partial<Address>;
}

type Params = Record<string, unknown>;

interface RouteContext {
  params: Params;
  url: Record<string, string>;
  authenticated: boolean;
}

interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

interface Route {
  methods: string[];
  pattern: RegExp;
  handle(ctx: RouteContext): Reply | Promise<Reply>;
}

const REST_PREFIX = '/wp-json';
const NAMESPACE = '/wc/v3';
const EDITABLE = ['POST', 'PUT', 'PATCH'];

class RestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
  static from(e: WpError): RestError {
    return new RestError(e.status, e.code, e.message);
  }
}

const cannot = (code: string, message: string) => new RestError(401, code, message);
const invalidParam = (name: string, reason: string) =>
  new RestError(400, 'rest_invalid_param', `Invalid parameter(s): ${name}`, { params: { [name]: reason } });

export class WooStore {
  /** http(s)://127.0.0.1:PORT, the WordPress home URL. */
  readonly url: string;
  /** For an HTTPS store, the PEM certificate a client must trust. */
  readonly ca?: string;
  /** The initial API key (key 1, user 1, "Initial key"), as the owner made it in WooCommerce > Settings > Advanced > REST API. */
  readonly consumerKey: string;
  readonly consumerSecret: string;
  /** Who signs in at /wc-auth/v1/login/ or /wp-login.php: the administrator, user 1. */
  readonly adminUsername: string;
  readonly adminPassword: string;
  readonly currency: string;
  readonly requests: RecordedRequest[] = [];

  private readonly stored: StoredOrder[] = [];
  private readonly orderNotes = new Map<number, (OrderNote & { at: Date })[]>();
  private readonly hooks: WebhookState[] = [];
  private readonly taxRates = new Map<number, TaxRate>();
  private readonly deliverer: Deliverer;
  private readonly keys = new ApiKeys();
  private readonly auth: WooAuthenticator;
  private readonly wordpress: WordPress;
  private readonly wcAuth: WcAuth;
  private readonly routes: Route[];
  private readonly offset: number;
  private readonly sequences = { post: 100, item: 0, meta: 1000, comment: 0, webhook: 0 };
  private readonly ids: IdSource = { post: () => ++this.sequences.post, item: () => ++this.sequences.item, meta: () => ++this.sequences.meta };
  private paused = false;
  private failures: { remaining: number; status: number; location?: string } = { remaining: 0, status: 503 };
  private listening = true;

  constructor(
    private readonly server: http.Server,
    private readonly port: number,
    options: Required<Omit<WooStoreOptions, 'https' | 'callbackCa'>> & { ca?: string; callbackCa?: string },
  ) {
    this.url = `${options.ca ? 'https' : 'http'}://127.0.0.1:${port}`;
    this.ca = options.ca;
    this.consumerKey = options.consumerKey;
    this.consumerSecret = options.consumerSecret;
    this.adminUsername = options.adminUsername;
    this.adminPassword = options.adminPassword;
    this.currency = options.currency;
    this.offset = options.utcOffsetMinutes;
    this.wordpress = new WordPress(this.url, { login: options.adminUsername, password: options.adminPassword }, Boolean(options.ca));
    const { consumerKey, consumerSecret, permissions } = options;
    this.keys.add({ userId: this.wordpress.admin.id, description: 'Initial key', permissions, consumerKey, consumerSecret });
    this.auth = new WooAuthenticator(this.keys, this.url);
    this.wcAuth = new WcAuth(this.wordpress, this.keys, { allowHttpCallback: options.allowHttpCallback, callbackCa: options.callbackCa });
    this.deliverer = new Deliverer(() => this.hooks, {
      timeoutMs: options.deliveryTimeoutMs,
      siteUrl: this.url,
      payload: (webhook, arg) => {
        if (webhook.resource === 'action') return { action: webhook.hooks[0], arg };
        const order = this.stored.find((o) => o.id === arg);
        return order && renderOrder(order, this.restUrl, this.offset);
      },
    });
    this.routes = this.defineRoutes();
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      // A client that hangs up mid-request leaves nothing to answer.
      this.handle(req, res).catch(() => res.destroy());
    });
  }

  private get restUrl(): string {
    return `${this.url}${REST_PREFIX}${NAMESPACE}`;
  }

  // -------------------------------------------------------------------------------------------
  // What tests arrange and inspect

  /** Every order, as GET /orders/{id} would render it, oldest first. */
  get orders(): WooOrder[] {
    return this.stored.map((o) => renderOrder(o, this.restUrl, this.offset));
  }

  /** Webhooks with their hidden state (secret, failure_count), oldest first. */
  get webhooks(): WebhookState[] {
    return this.hooks.map((w) => ({ ...w, hooks: [...w.hooks] }));
  }

  /** Pings and payload deliveries, in the order they were sent. */
  get deliveries(): Delivery[] {
    return this.deliverer.deliveries;
  }

  /** Every REST API key, the initial one (id 1) first, with those revoked or deleted marked `exists: false`. */
  get apiKeys(): WooApiKey[] {
    return this.keys.list();
  }

  /** Each POST of a granted key to an app's callback_url, in the order they were made. */
  get callbacks(): CallbackAttempt[] {
    return [...this.wcAuth.callbacks];
  }

  /** Revokes a key as the owner would in WooCommerce > Settings > Advanced > REST API: it no longer authenticates. */
  revokeKey(id: number): void {
    if (!this.keys.delete(id)) throw new Error(`no API key ${id}`);
  }

  /** The order's notes as GET /orders/{id}/notes lists them: newest first. */
  notes(orderId: number): OrderNote[] {
    return (this.orderNotes.get(orderId) ?? []).map(({ at: _at, ...note }) => note).reverse();
  }

  /** Builds a complete order (totals, taxes, discounts) from a few inputs; fires order.created. */
  addOrder(input: OrderInput): WooOrder {
    const order = buildOrder(input, this.currency, this.ids, (percent) => this.taxRate(percent), new Date());
    this.stored.push(order);
    if (order.status !== 'pending') this.addNote(order, statusTransitionNote('pending', order.status), false, 'system', order.dateCreated);
    this.fire('woocommerce_new_order', order.id);
    if (order.status !== 'pending') this.fire(`woocommerce_order_status_${order.status}`, order.id);
    return this.render(order);
  }

  /** Changes an order as an admin or a plugin would: saves it and fires order.updated (and status actions). */
  updateOrder(id: number, changes: OrderChanges): WooOrder {
    const order = this.stored.find((o) => o.id === id);
    if (!order) throw new Error(`no order ${id}`);
    return this.render(this.save(order, changes));
  }

  /** wc_create_refund(): records a refund, fires order.updated, and marks a fully refunded order refunded. */
  refundOrder(id: number, refund: { amount: Money; reason?: string }): WooOrder {
    const order = this.stored.find((o) => o.id === id);
    if (!order) throw new Error(`no order ${id}`);
    order.refunds.unshift({ id: this.ids.post(), reason: refund.reason ?? '', amount: toMinor(refund.amount, order.decimals) });
    const totals = totalsOf(order);
    this.fire('woocommerce_order_refunded', order.id);
    return this.render(this.save(order, totals.refunded >= totals.total ? { status: 'refunded' } : {}));
  }

  /**
   * What a cash-on-delivery plugin does once the money is in (the order is then `paidOnDelivery`):
   * `$order->set_date_paid( time() )`, the transaction id if any, and `save()`, which fires order.updated.
   */
  markPaid(id: number, payment: { transaction_id?: string } = {}): WooOrder {
    const order = this.stored.find((o) => o.id === id);
    if (!order) throw new Error(`no order ${id}`);
    order.datePaid = wholeSeconds(new Date());
    return this.render(this.save(order, { transaction_id: payment.transaction_id }));
  }

  /** While paused, changes still happen but no delivery is scheduled: the deliveries are simply missed. */
  setWebhooksPaused(paused: boolean): void {
    this.paused = paused;
  }

  /** The next `n` requests get `status` (default 503) with an HTML error page, before any authentication. */
  failNextRequests(n: number, status = 503): void {
    this.failures = { remaining: n, status };
  }

  /** The next `n` requests are redirected (302) to `location`, as a compromised or misconfigured site might. */
  redirectNextRequests(n: number, location: string): void {
    this.failures = { remaining: n, status: 302, location };
  }

  /** Stops listening: connections are refused until `up()`. */
  async down(): Promise<void> {
    if (!this.listening) return;
    this.listening = false;
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  /** Listens again on the same port. */
  async up(): Promise<void> {
    if (this.listening) return;
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.listening = true;
  }

  /** Resolves once every scheduled webhook delivery (and ping) has been attempted. */
  settled(): Promise<void> {
    return this.deliverer.settled();
  }

  /** Closes the server, every connection and every delivery under way. */
  async stop(): Promise<void> {
    this.deliverer.stop();
    this.wcAuth.stop();
    await this.down();
  }

  // -------------------------------------------------------------------------------------------
  // Store behaviour shared by the API and the test controls

  private render(order: StoredOrder): WooOrder {
    return renderOrder(order, this.restUrl, this.offset);
  }

  private fire(hook: string, arg: number): void {
    if (!this.paused) this.deliverer.fire(hook, arg);
  }

  private taxRate(percent: number): TaxRate {
    let rate = this.taxRates.get(percent);
    if (!rate) {
      rate = { id: this.taxRates.size + 1, percent, label: `VAT ${percent}%`, rate_code: `VAT ${percent}%-1` };
      this.taxRates.set(percent, rate);
    }
    return rate;
  }

  /** WC_Order::save(): apply, stamp date_modified, fire woocommerce_update_order, then the status transition. */
  private save(order: StoredOrder, changes: OrderChanges): StoredOrder {
    const now = wholeSeconds(new Date());
    for (const meta of changes.meta_data ?? []) {
      const existing = meta.id ? order.meta.find((m) => m.id === meta.id) : order.meta.find((m) => m.key === meta.key);
      if (existing) {
        existing.key = meta.key;
        existing.value = meta.value;
        // update_meta_data() without an ID keeps the first entry of that key and drops the others.
        if (!meta.id) order.meta = order.meta.filter((m) => m === existing || m.key !== meta.key);
      } else {
        order.meta.push({ id: this.ids.meta(), key: meta.key, value: meta.value });
      }
    }
    if (changes.customer_note !== undefined) order.customerNote = changes.customer_note;
    if (changes.transaction_id !== undefined) order.transactionId = changes.transaction_id;
    if (changes.payment_method !== undefined) order.paymentMethod = changes.payment_method;
    if (changes.payment_method_title !== undefined) order.paymentMethodTitle = changes.payment_method_title;
    if (changes.billing) order.billing = { ...order.billing, ...changes.billing };
    if (changes.shipping) order.shipping = { ...order.shipping, ...changes.shipping };
    const from = order.status;
    const to = changes.status ?? from;
    if (to !== from) applyStatus(order, to, now);
    order.dateModified = now;
    this.fire('woocommerce_update_order', order.id);
    if (to !== from) {
      this.addNote(order, statusTransitionNote(from, to), false, 'system', now);
      this.fire(`woocommerce_order_status_${to}`, order.id);
    }
    return order;
  }

  private addNote(order: StoredOrder, note: string, customerNote: boolean, author: string, at: Date): OrderNote & { at: Date } {
    const stored = {
      id: ++this.sequences.comment,
      author,
      date_created: wpDate(at, this.offset),
      date_created_gmt: wpDate(at, 0),
      note,
      customer_note: customerNote,
      at,
    };
    this.orderNotes.set(order.id, [...(this.orderNotes.get(order.id) ?? []), stored]);
    return stored;
  }

  // -------------------------------------------------------------------------------------------
  // HTTP: WordPress's REST server, then WooCommerce's controllers

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const method = (req.method ?? 'GET').toUpperCase();
    const rawUrl = req.url ?? '/';
    const q = rawUrl.indexOf('?');
    const rawPath = q === -1 ? rawUrl : rawUrl.slice(0, q);
    const query = parseStr(q === -1 ? '' : rawUrl.slice(q + 1));
    const record: RecordedRequest = { method, path: safeDecode(rawPath), query: phpToPlain(query) as Params, auth: 'none', status: 0, at: new Date() };
    this.requests.push(record);
    const send = (reply: Reply) => {
      record.status = reply.status;
      const isJson = typeof reply.body !== 'string';
      const { Link: pageLinks, ...headers } = reply.headers ?? {};
      res.writeHead(reply.status, {
        'Content-Type': isJson ? 'application/json; charset=UTF-8' : 'text/html; charset=UTF-8',
        'X-Robots-Tag': 'noindex',
        'X-Content-Type-Options': 'nosniff',
        ...(isJson
          ? {
              'Access-Control-Expose-Headers': 'X-WP-Total, X-WP-TotalPages, Link',
              Link: [`<${this.url}${REST_PREFIX}/>; rel="https://api.w.org/"`, ...(pageLinks ? [pageLinks] : [])].join(', '),
            }
          : {}),
        ...headers,
      });
      res.end(isJson ? wpJsonEncode(reply.body) : reply.body);
    };

    if (this.failures.remaining > 0) {
      this.failures.remaining -= 1;
      const { status, location } = this.failures;
      return send({ status, body: `<!DOCTYPE html><html><body><h1>${status}</h1><p>The site is unavailable.</p></body></html>`, headers: location ? { Location: location } : {} });
    }
    const contentType = String(req.headers['content-type'] ?? '').toLowerCase();
    const isForm = contentType.startsWith('application/x-www-form-urlencoded');
    // PHP fills $_POST (which OAuth signs) only for a form-encoded POST.
    const form: PhpArray = method === 'POST' && isForm ? parseStr(raw.toString('utf8')) : new Map();
    if (!rawPath.startsWith(`${REST_PREFIX}/`)) {
      const page = await this.sitePage(safeDecode(rawPath), { method, query, form, headers: req.headers });
      return send(page ?? { status: 404, body: '<!DOCTYPE html><html><body><h1>Page not found</h1></body></html>' });
    }

    try {
      const route = safeDecode(rawPath.slice(REST_PREFIX.length)).replace(/(.)\/$/, '$1');
      const isWooRoute = /^\/wc[/-]/.test(route);
      // WooCommerce only authenticates requests to its own namespaces (is_request_to_rest_api()).
      const authRequest = { method, rawPath, query, form, headers: req.headers, secure: Boolean(this.ca) };
      const auth = isWooRoute ? this.auth.authenticate(authRequest) : { kind: presentedKind(authRequest), authenticated: false };
      record.auth = auth.kind;
      if ('error' in auth && auth.error) throw RestError.from(auth.error);

      const body = parseBody(raw, contentType, isForm);
      // WP_REST_Request parameter order: JSON body over form body over query string.
      const params: Params = { ...(phpToPlain(query) as Params), ...body };
      for (const r of this.routes) {
        const m = r.pattern.exec(route);
        if (!m || !r.methods.includes(method)) continue;
        return send(await r.handle({ params, url: { ...m.groups }, authenticated: auth.authenticated }));
      }
      throw new RestError(404, 'rest_no_route', 'No route was found matching the URL and request method.');
    } catch (e) {
      if (e instanceof RestError) {
        send({ status: e.status, body: { code: e.code, message: e.message, data: { status: e.status, ...e.extra } } });
      } else {
        // WordPress's fatal-error handler answers this way; the message is added so a test can tell why.
        const message = `<p>There has been a critical error on this website.</p><!-- ${e instanceof Error ? e.message : String(e)} -->`;
        send({ status: 500, body: { code: 'internal_server_error', message, data: { status: 500 } } });
      }
    }
  }

  /** The site's pages: WooCommerce's app authorization and WordPress's sign-in. */
  private sitePage(path: string, req: PageRequest): Promise<PageReply> | PageReply | undefined {
    const wcAuth = wcAuthRoute(path);
    if (wcAuth) return this.wcAuth.handle(wcAuth, req);
    if (path === '/wp-login.php') return this.wordpress.loginScreen(req);
    return undefined;
  }

  private defineRoutes(): Route[] {
    const route = (methods: string[], path: string, handle: Route['handle']): Route => ({
      methods,
      pattern: new RegExp(`^${NAMESPACE}${path}$`, 'i'),
      handle,
    });
    return [
      route(['GET'], '/orders', (c) => this.listOrders(c)),
      route(['GET'], '/orders/(?<id>\\d+)', (c) => this.getOrder(c)),
      route(EDITABLE, '/orders/(?<id>\\d+)', (c) => this.putOrder(c)),
      route(['GET'], '/orders/(?<order_id>\\d+)/notes', (c) => this.listNotes(c)),
      route(['POST'], '/orders/(?<order_id>\\d+)/notes', (c) => this.createNote(c)),
      route(['GET'], '/orders/(?<order_id>\\d+)/notes/(?<id>\\d+)', (c) => this.getNote(c)),
      route(['GET'], '/system_status', (c) => this.systemStatus(c)),
      route(['GET'], '/webhooks', (c) => this.listWebhooks(c)),
      route(['POST'], '/webhooks', (c) => this.createWebhook(c)),
      route(['GET'], '/webhooks/(?<id>\\d+)', (c) => this.getWebhook(c)),
      route(EDITABLE, '/webhooks/(?<id>\\d+)', (c) => this.putWebhook(c)),
      route(['DELETE'], '/webhooks/(?<id>\\d+)', (c) => this.deleteWebhook(c)),
    ];
  }

  /** WC_REST_Orders_Controller::get_items(), with the v3 collection parameters a bridge polls with. */
  private listOrders({ params, authenticated }: RouteContext): Reply {
    const page = intParam(params, 'page', 1, 1);
    const perPage = intParam(params, 'per_page', 10, 1, 100);
    const order = enumParam(params, 'order', ['asc', 'desc'], 'desc');
    const orderby = enumParam(params, 'orderby', ['date', 'id', 'include', 'title', 'slug', 'modified'], 'date');
    const statuses = listParam(params, 'status', ['any', 'trash', ...ORDER_STATUSES], ['any']);
    const gmt = boolParam(params, 'dates_are_gmt', false);
    const dates = Object.fromEntries(
      ['after', 'before', 'modified_after', 'modified_before'].map((name) => [name, dateParam(params, name, gmt ? 0 : this.offset)]),
    );
    if (!authenticated) throw cannot('woocommerce_rest_cannot_view', 'Sorry, you cannot list resources.');

    const matching = this.stored.filter(
      (o) =>
        (statuses.includes('any') ? o.status !== 'checkout-draft' : statuses.includes(o.status)) &&
        (!dates.after || o.dateCreated > dates.after) &&
        (!dates.before || o.dateCreated < dates.before) &&
        (!dates.modified_after || o.dateModified > dates.modified_after) &&
        (!dates.modified_before || o.dateModified < dates.modified_before),
    );
    // 'date' and 'modified' get ID as a tie-breaker, for stable pages (prepare_objects_query()).
    const key = (o: StoredOrder) => (orderby === 'modified' ? o.dateModified.getTime() : orderby === 'id' ? 0 : o.dateCreated.getTime());
    const sign = order === 'asc' ? 1 : -1;
    matching.sort((a, b) => sign * (key(a) - key(b) || a.id - b.id));
    return this.page(matching.map((o) => this.render(o)), page, perPage, params, 'orders');
  }

  private page<T>(items: T[], page: number, perPage: number, params: Params, base: string): Reply {
    const total = items.length;
    const pages = Math.ceil(total / perPage);
    const links: string[] = [];
    const link = (p: number) => `${this.restUrl}/${base}?${new URLSearchParams({ ...stringParams(params), page: String(p) })}`;
    if (page > 1) links.push(`<${link(Math.min(page - 1, pages))}>; rel="prev"`);
    if (pages > page) links.push(`<${link(page + 1)}>; rel="next"`);
    return {
      status: 200,
      body: items.slice((page - 1) * perPage, page * perPage),
      headers: { 'X-WP-Total': String(total), 'X-WP-TotalPages': String(pages), ...(links.length ? { Link: links.join(', ') } : {}) },
    };
  }

  private findOrder(id: string | undefined): StoredOrder | undefined {
    return this.stored.find((o) => o.id === Number(id));
  }

  private getOrder({ url, authenticated }: RouteContext): Reply {
    const order = this.findOrder(url.id);
    // The permission check only runs on an order that exists: a missing one is a 404 for anyone.
    if (order && !authenticated) throw cannot('woocommerce_rest_cannot_view', 'Sorry, you cannot view this resource.');
    if (!order) throw new RestError(404, 'woocommerce_rest_shop_order_invalid_id', 'Invalid ID.');
    return { status: 200, body: this.render(order) };
  }

  private putOrder({ url, params, authenticated }: RouteContext): Reply {
    const status = params.status === undefined ? undefined : enumParam(params, 'status', ORDER_STATUSES, 'pending');
    const meta = params.meta_data;
    if (meta !== undefined && !(Array.isArray(meta) && meta.every((m) => m && typeof m === 'object' && typeof (m as Params).key === 'string'))) {
      throw invalidParam('meta_data', 'meta_data[0][key] is not of type string.');
    }
    const order = this.findOrder(url.id);
    if (order && !authenticated) throw cannot('woocommerce_rest_cannot_edit', 'Sorry, you are not allowed to edit this resource.');
    if (!order) throw new RestError(400, 'woocommerce_rest_shop_order_invalid_id', 'Invalid ID.');
    const text = (name: string) => (typeof params[name] === 'string' ? params[name] : undefined);
    const address = (name: string) => (params[name] && typeof params[name] === 'object' ? (params[name] as Record<string, string>) : undefined);
    this.save(order, {
      status,
      meta_data: meta as OrderChanges['meta_data'],
      customer_note: text('customer_note'),
      transaction_id: text('transaction_id'),
      payment_method: text('payment_method'),
      payment_method_title: text('payment_method_title'),
      billing: address('billing'),
      shipping: address('shipping'),
    });
    return { status: 200, body: this.render(order) };
  }

  private listNotes({ url, authenticated }: RouteContext): Reply {
    if (!authenticated) throw cannot('woocommerce_rest_cannot_view', 'Sorry, you cannot list resources.');
    const order = this.findOrder(url.order_id);
    if (!order) throw new RestError(404, 'woocommerce_rest_shop_order_invalid_id', 'Invalid order ID.');
    return { status: 200, body: this.notes(order.id).map((n) => this.noteBody(order.id, n)) };
  }

  private getNote({ url, authenticated }: RouteContext): Reply {
    const order = this.findOrder(url.order_id);
    if (order && !authenticated) throw cannot('woocommerce_rest_cannot_view', 'Sorry, you cannot view this resource.');
    if (!order) throw new RestError(404, 'woocommerce_rest_order_invalid_id', 'Invalid order ID.');
    const note = this.notes(order.id).find((n) => n.id === Number(url.id));
    if (!note) throw new RestError(404, 'woocommerce_rest_invalid_id', 'Invalid resource ID.');
    return { status: 200, body: this.noteBody(order.id, note) };
  }

  /**
   * WC_REST_Order_Notes_Controller::create_item(). Core's add_order_note() does not save the order,
   * but stores commonly run plugins that save it when a note is added (woocommerce_order_note_added),
   * which fires order.updated: the double does so, so a bridge that writes a note proves it survives
   * the webhook its own write causes.
   */
  private createNote({ url, params, authenticated }: RouteContext): Reply {
    if (typeof params.note !== 'string') {
      throw new RestError(400, 'rest_missing_callback_param', 'Missing parameter(s): note', { params: ['note'] });
    }
    if (!authenticated) throw cannot('woocommerce_rest_cannot_create', 'Sorry, you are not allowed to create resources.');
    const order = this.findOrder(url.order_id);
    if (!order) throw new RestError(404, 'woocommerce_rest_order_invalid_id', 'Invalid order ID.');
    const author = boolParam(params, 'added_by_user', false) ? 'shop-manager' : 'system';
    const note = this.addNote(order, params.note, boolParam(params, 'customer_note', false), author, wholeSeconds(new Date()));
    this.save(order, {});
    const body = this.noteBody(order.id, note);
    return { status: 201, body, headers: { Location: `${this.restUrl}/orders/${order.id}/notes/${note.id}` } };
  }

  private noteBody(orderId: number, note: OrderNote) {
    const self = `${this.restUrl}/orders/${orderId}/notes`;
    const { id, author, date_created, date_created_gmt, note: text, customer_note } = note;
    return {
      id, author, date_created, date_created_gmt, note: text, customer_note,
      _links: { self: [{ href: `${self}/${id}` }], collection: [{ href: self }], up: [{ href: `${this.restUrl}/orders/${orderId}` }] },
    };
  }

  /** A small, plausible slice of GET /system_status. */
  private systemStatus({ authenticated }: RouteContext): Reply {
    if (!authenticated) throw cannot('woocommerce_rest_cannot_view', 'Sorry, you cannot list resources.');
    const decimals = currencyDecimals(this.currency);
    return {
      status: 200,
      body: {
        environment: {
          home_url: this.url,
          site_url: this.url,
          version: WC_VERSION,
          wp_version: WP_VERSION,
          wp_multisite: false,
          language: 'en_US',
          server_info: 'nginx/1.26.3',
          php_version: '8.3.19',
          default_timezone: 'UTC',
          external_object_cache: null,
        },
        database: { wc_database_version: WC_VERSION, database_prefix: 'wp_' },
        active_plugins: [{ plugin: 'woocommerce/woocommerce.php', name: 'WooCommerce', version: WC_VERSION, author_name: 'Automattic' }],
        theme: { name: 'Storefront', version: '4.6.1' },
        settings: {
          api_enabled: true,
          force_ssl: false,
          currency: this.currency,
          currency_symbol: this.currency,
          currency_position: 'left',
          thousand_separator: ',',
          decimal_separator: '.',
          number_of_decimals: decimals,
          geolocation_enabled: false,
          woocommerce_com_connected: 'no',
        },
        security: { secure_connection: Boolean(this.ca), hide_errors: true },
        pages: [],
      },
    };
  }

  private renderWebhook(w: WebhookState) {
    return {
      id: w.id,
      name: w.name,
      status: w.status,
      topic: w.topic,
      resource: w.resource,
      event: w.event,
      hooks: [...w.hooks],
      delivery_url: w.delivery_url,
      date_created: wpDate(w.date_created, this.offset),
      date_created_gmt: wpDate(w.date_created, 0),
      date_modified: wpDate(w.date_modified, this.offset),
      date_modified_gmt: wpDate(w.date_modified, 0),
      _links: { self: [{ href: `${this.restUrl}/webhooks/${w.id}` }], collection: [{ href: `${this.restUrl}/webhooks` }] },
    };
  }

  private listWebhooks({ params, authenticated }: RouteContext): Reply {
    const page = intParam(params, 'page', 1, 1);
    const perPage = intParam(params, 'per_page', 10, 1, 100);
    const status = enumParam(params, 'status', ['all', ...WEBHOOK_STATUSES], 'all');
    const order = enumParam(params, 'order', ['asc', 'desc'], 'desc');
    if (!authenticated) throw cannot('woocommerce_rest_cannot_view', 'Sorry, you cannot list resources.');
    const matching = this.hooks.filter((w) => status === 'all' || w.status === status);
    matching.sort((a, b) => (order === 'asc' ? a.id - b.id : b.id - a.id));
    return this.page(matching.map((w) => this.renderWebhook(w)), page, perPage, params, 'webhooks');
  }

  /** WC_REST_Webhooks_V1_Controller::create_item(): saved active, then pinged before the answer is sent. */
  private async createWebhook({ params, authenticated }: RouteContext): Promise<Reply> {
    const missing = ['topic', 'delivery_url'].filter((name) => params[name] === undefined);
    if (missing.length) throw new RestError(400, 'rest_missing_callback_param', `Missing parameter(s): ${missing.join(', ')}`, { params: missing });
    if (!authenticated) throw cannot('woocommerce_rest_cannot_create', 'Sorry, you are not allowed to create resources.');
    const topic = String(params.topic).toLowerCase();
    if (!isValidTopic(topic)) throw new RestError(400, 'woocommerce_rest_shop_webhook_invalid_topic', 'Webhook topic is required and must be valid.');
    const deliveryUrl = String(params.delivery_url);
    if (!isValidDeliveryUrl(deliveryUrl)) {
      throw new RestError(400, 'woocommerce_rest_shop_webhook_invalid_delivery_url', 'Webhook delivery URL must be a valid URL starting with http:// or https://.');
    }
    const now = wholeSeconds(new Date());
    const webhook: WebhookState = {
      id: ++this.sequences.webhook,
      name: typeof params.name === 'string' && params.name ? params.name : `Webhook created on ${webhookNameDate(new Date(now.getTime() + this.offset * 60_000))}`,
      status: 'active',
      topic,
      ...topicParts(topic),
      delivery_url: deliveryUrl,
      secret: typeof params.secret === 'string' && params.secret ? params.secret : randomBytes(38).toString('base64').slice(0, 50),
      failure_count: 0,
      pending_delivery: true,
      date_created: now,
      date_modified: now,
    };
    this.hooks.push(webhook);
    await this.deliverer.ping(webhook);
    return { status: 201, body: this.renderWebhook(webhook), headers: { Location: `${this.restUrl}/webhooks/${webhook.id}` } };
  }

  private findWebhook(id: string | undefined): WebhookState | undefined {
    return this.hooks.find((w) => w.id === Number(id));
  }

  private getWebhook({ url, authenticated }: RouteContext): Reply {
    if (!authenticated) throw cannot('woocommerce_rest_cannot_view', 'Sorry, you cannot view this resource.');
    const webhook = this.findWebhook(url.id);
    if (!webhook) throw new RestError(400, 'woocommerce_rest_shop_webhook_invalid_id', 'ID is invalid.');
    return { status: 200, body: this.renderWebhook(webhook) };
  }

  /** update_item(): a re-enabled webhook keeps its failure_count, so one more failure disables it again. */
  private putWebhook({ url, params, authenticated }: RouteContext): Reply {
    if (params.status !== undefined) enumParam(params, 'status', WEBHOOK_STATUSES, 'active');
    if (!authenticated) throw cannot('woocommerce_rest_cannot_edit', 'Sorry, you are not allowed to edit this resource.');
    const webhook = this.findWebhook(url.id);
    if (!webhook) throw new RestError(400, 'woocommerce_rest_shop_webhook_invalid_id', 'ID is invalid.');
    if (params.topic) {
      const topic = text(params.topic).toLowerCase();
      if (!isValidTopic(topic)) throw new RestError(400, 'woocommerce_rest_shop_webhook_invalid_topic', 'Webhook topic must be valid.');
      Object.assign(webhook, { topic, ...topicParts(topic) });
    }
    if (params.delivery_url) {
      if (!isValidDeliveryUrl(text(params.delivery_url))) {
        throw new RestError(400, 'woocommerce_rest_shop_webhook_invalid_delivery_url', 'Webhook delivery URL must be a valid URL starting with http:// or https://.');
      }
      webhook.delivery_url = text(params.delivery_url);
    }
    if (typeof params.secret === 'string' && params.secret) webhook.secret = params.secret;
    if (params.status) webhook.status = params.status as WebhookStatus;
    if (typeof params.name === 'string' && params.name) webhook.name = params.name;
    webhook.date_modified = wholeSeconds(new Date());
    return { status: 200, body: this.renderWebhook(webhook) };
  }

  private deleteWebhook({ url, params, authenticated }: RouteContext): Reply {
    if (!authenticated) throw cannot('woocommerce_rest_cannot_delete', 'Sorry, you are not allowed to delete this resource.');
    if (!boolParam(params, 'force', false)) throw new RestError(501, 'woocommerce_rest_trash_not_supported', 'Webhooks do not support trashing.');
    const webhook = this.findWebhook(url.id);
    if (!webhook) throw new RestError(404, 'woocommerce_rest_shop_webhook_invalid_id', 'Invalid ID.');
    this.hooks.splice(this.hooks.indexOf(webhook), 1);
    return { status: 200, body: this.renderWebhook(webhook) };
  }
}

/** Starts a store on an ephemeral port of 127.0.0.1. */
export async function startWooStore(options: WooStoreOptions = {}): Promise<WooStore> {
  const tls = options.https ? await selfSignedCertificate() : undefined;
  const server = tls ? https.createServer({ key: tls.key, cert: tls.cert }) : http.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return new WooStore(server, port, {
    consumerKey: options.consumerKey ?? `ck_${randHash()}`,
    consumerSecret: options.consumerSecret ?? `cs_${randHash()}`,
    permissions: options.permissions ?? 'read_write',
    currency: (options.currency ?? 'EUR').toUpperCase(),
    utcOffsetMinutes: options.utcOffsetMinutes ?? 120,
    deliveryTimeoutMs: options.deliveryTimeoutMs ?? 60_000,
    adminUsername: options.adminUsername ?? 'admin',
    adminPassword: options.adminPassword ?? randomBytes(12).toString('base64url'),
    allowHttpCallback: options.allowHttpCallback ?? false,
    callbackCa: options.callbackCa,
    ca: tls?.cert,
  });
}

// ---------------------------------------------------------------------------------------------
// WordPress request plumbing

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function safeDecode(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** WP_REST_Request: a JSON body is read when the content type says JSON, a form body when it says form. */
function parseBody(raw: Buffer, contentType: string, isForm: boolean): Params {
  if (!raw.length) return {};
  if (isForm) return phpToPlain(parseStr(raw.toString('utf8'))) as Params;
  if (!/^application\/([\w.+-]+\+)?json/.test(contentType)) return {};
  try {
    const parsed: unknown = JSON.parse(raw.toString('utf8'));
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Params) : {};
  } catch {
    throw new RestError(400, 'rest_invalid_json', 'Invalid JSON body passed.', { json_error_code: 4, json_error_message: 'Syntax error' });
  }
}

/** The date in WooCommerce's default webhook name: strftime('%b %d, %Y @ %I:%M %p') of the site's wall time. */
function webhookNameDate(wall: Date): string {
  const month = wall.toLocaleString('en-US', { month: 'short', timeZone: 'UTC' });
  const pad = (n: number) => String(n).padStart(2, '0');
  const hours = wall.getUTCHours();
  return `${month} ${pad(wall.getUTCDate())}, ${wall.getUTCFullYear()} @ ${pad(hours % 12 || 12)}:${pad(wall.getUTCMinutes())} ${hours < 12 ? 'AM' : 'PM'}`;
}

/** A request value as text: a string as it is, any other JSON value (a number, boolean, null, list or object) as JSON. */
function text(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function stringParams(params: Params): Record<string, string> {
  return Object.fromEntries(Object.entries(params).filter(([, v]) => typeof v === 'string' || typeof v === 'number').map(([k, v]) => [k, String(v)]));
}

/** rest_validate_request_arg() for an integer argument with bounds. */
function intParam(params: Params, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const value = params[name];
  if (value === undefined) return fallback;
  const n = typeof value === 'number' ? value : /^-?\d+$/.test(text(value)) ? Number(value) : NaN;
  if (!Number.isInteger(n)) throw invalidParam(name, `${name} is not of type integer.`);
  if (n < min || n > max) {
    throw invalidParam(name, max === Number.MAX_SAFE_INTEGER ? `${name} must be greater than or equal to ${min}` : `${name} must be between ${min} (inclusive) and ${max} (inclusive)`);
  }
  return n;
}

function enumParam<T extends string>(params: Params, name: string, allowed: readonly T[], fallback: T): T {
  const value = params[name];
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !allowed.includes(value as T)) throw invalidParam(name, `${name} is not one of ${allowed.join(', ')}.`);
  return value as T;
}

/** An array argument: `a,b`, `a[]=x&a[]=y` or a JSON list, each item from the enum. */
function listParam(params: Params, name: string, allowed: readonly string[], fallback: string[]): string[] {
  const value = params[name];
  if (value === undefined) return fallback;
  const items = Array.isArray(value) ? value.map(String) : text(value).split(/[\s,]+/).filter(Boolean);
  const bad = items.find((i) => !allowed.includes(i));
  if (bad !== undefined) throw invalidParam(name, `${name}[${items.indexOf(bad)}] is not one of ${allowed.join(', ')}.`);
  return items;
}

/** rest_sanitize_boolean(). */
function boolParam(params: Params, name: string, fallback: boolean): boolean {
  const value = params[name];
  if (value === undefined) return fallback;
  if (typeof value === 'boolean') return value;
  return !['false', '0', '', 'no', 'off'].includes(text(value).toLowerCase());
}

function dateParam(params: Params, name: string, offsetMinutes: number): Date | undefined {
  const value = params[name];
  if (value === undefined) return undefined;
  const date = typeof value === 'string' ? parseRestDate(value, offsetMinutes) : undefined;
  if (!date) throw invalidParam(name, 'Invalid date.');
  return date;
}
