/**
 * Webhooks of the WooCommerce double, after WC_Webhook (plugins/woocommerce/includes/class-wc-webhook.php)
 * and wc_webhook_process_delivery(): topics map to hooks, deliveries wait in a queue like Action
 * Scheduler's (one pending delivery per webhook and resource, the payload built when it is sent),
 * and consecutive failures end with the webhook disabled.
 */
import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { WC_VERSION, WP_VERSION } from './orders';
import { wpJsonEncode } from './php';

export type WebhookStatus = 'active' | 'paused' | 'disabled';
export const WEBHOOK_STATUSES: WebhookStatus[] = ['active', 'paused', 'disabled'];

/** WC_Webhook's stored data, including what the REST API never shows (secret, failure_count). */
export interface WebhookState {
  id: number;
  name: string;
  status: WebhookStatus;
  topic: string;
  resource: string;
  event: string;
  hooks: string[];
  delivery_url: string;
  secret: string;
  failure_count: number;
  pending_delivery: boolean;
  date_created: Date;
  date_modified: Date;
}

/** One POST the store made to a delivery URL, with what came back. */
export interface Delivery {
  kind: 'ping' | 'payload';
  webhookId: number;
  topic: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  /** The receiver's status code; null when it could not be reached or did not answer in time. */
  status: number | null;
  error?: string;
  at: Date;
}

export const USER_AGENT = `WooCommerce/${WC_VERSION} Hookshot (WordPress/${WP_VERSION})`;

/** WC_Webhook::get_default_topic_hooks(). */
const TOPIC_HOOKS: Record<string, string[]> = {
  'coupon.created': ['woocommerce_process_shop_coupon_meta', 'woocommerce_new_coupon'],
  'coupon.updated': ['woocommerce_process_shop_coupon_meta', 'woocommerce_update_coupon'],
  'coupon.deleted': ['wp_trash_post'],
  'coupon.restored': ['untrashed_post'],
  'customer.created': ['user_register', 'woocommerce_created_customer', 'woocommerce_new_customer'],
  'customer.updated': ['profile_update', 'woocommerce_update_customer'],
  'customer.deleted': ['delete_user'],
  'order.created': ['woocommerce_new_order'],
  'order.updated': ['woocommerce_update_order', 'woocommerce_order_refunded', 'woocommerce_delete_order_refund'],
  'order.deleted': ['wp_trash_post', 'woocommerce_trash_order'],
  'order.restored': ['untrashed_post', 'woocommerce_untrash_order'],
  'product.created': ['woocommerce_process_product_meta', 'woocommerce_new_product', 'woocommerce_new_product_variation'],
  'product.updated': ['woocommerce_process_product_meta', 'woocommerce_update_product', 'woocommerce_update_product_variation'],
  'product.deleted': ['wp_trash_post'],
  'product.restored': ['untrashed_post'],
};
const FORBIDDEN_ACTIONS = ['action.woocommerce_login_credentials', 'action.woocommerce_product_csv_importer_check_import_file_path', 'action.woocommerce_webhook_should_deliver'];

/** wc_is_webhook_valid_topic(): a core resource.event, or an action on a woocommerce_ / wc_ hook. */
export function isValidTopic(topic: string): boolean {
  if (FORBIDDEN_ACTIONS.includes(topic)) return false;
  if (topic.startsWith('action.woocommerce_') || topic.startsWith('action.wc_')) return true;
  return topic in TOPIC_HOOKS;
}

export function topicParts(topic: string): Pick<WebhookState, 'resource' | 'event' | 'hooks'> {
  const [resource, ...rest] = topic.split('.');
  const event = rest.join('.');
  return { resource, event, hooks: resource === 'action' ? [event] : TOPIC_HOOKS[topic] };
}

/** wc_is_valid_url() for a delivery URL: absolute http or https. */
export function isValidDeliveryUrl(url: string): boolean {
  try {
    return ['http:', 'https:'].includes(new URL(url).protocol);
  } catch {
    return false;
  }
}

interface QueuedDelivery {
  webhookId: number;
  arg: number;
}

export interface DelivererOptions {
  timeoutMs: number;
  siteUrl: string;
  /** Builds the payload when the delivery is sent, as WooCommerce does: undefined when the resource is gone. */
  payload(webhook: WebhookState, arg: number): unknown;
}

/** Sends what the store's hooks scheduled, one at a time, and keeps the delivery log. */
export class Deliverer {
  readonly deliveries: Delivery[] = [];
  private readonly queue: QueuedDelivery[] = [];
  private running?: Promise<void>;
  private readonly inFlight = new Set<http.ClientRequest>();
  private readonly pings = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly webhooks: () => WebhookState[],
    private readonly options: DelivererOptions,
  ) {}

  /** do_action(hook, arg): every active webhook listening to the hook schedules a delivery for `arg`. */
  fire(hook: string, arg: number): void {
    for (const webhook of this.webhooks()) {
      if (webhook.status !== 'active' || !webhook.hooks.includes(hook)) continue;
      // Action Scheduler keeps one pending delivery per webhook and argument: a second change made
      // before the first delivery went out is not sent twice, the queued delivery carries both.
      if (this.queue.some((q) => q.webhookId === webhook.id && q.arg === arg)) continue;
      this.queue.push({ webhookId: webhook.id, arg });
    }
    this.running ??= this.drain();
  }

  /** Resolves once every scheduled delivery and ping has been attempted. */
  async settled(): Promise<void> {
    while (this.running || this.pings.size) await Promise.all([this.running, ...this.pings]);
  }

  /** WC_Webhook::deliver_ping(): a form-encoded `webhook_id=N`; its outcome changes nothing but pending_delivery. */
  async ping(webhook: WebhookState): Promise<void> {
    const body = `webhook_id=${webhook.id}`;
    const headers = { 'Content-Type': 'application/x-www-form-urlencoded', 'User-Agent': USER_AGENT };
    // wp_safe_remote_post()'s default timeout is 5 seconds.
    const sent = this.post('ping', webhook, headers, body, Math.min(5000, this.options.timeoutMs)).then((status) => {
      if (status === 200) webhook.pending_delivery = false;
    });
    this.pings.add(sent);
    await sent.finally(() => this.pings.delete(sent));
  }

  /** Aborts what is under way and drops what is queued: the store is going away. */
  stop(): void {
    this.stopped = true;
    this.queue.length = 0;
    for (const req of this.inFlight) req.destroy();
  }

  private async drain(): Promise<void> {
    // Deliveries run after the change that scheduled them has been answered, like a queue runner would.
    await new Promise((resolve) => setImmediate(resolve));
    try {
      while (this.queue.length && !this.stopped) {
        const next = this.queue.shift()!;
        const webhook = this.webhooks().find((w) => w.id === next.webhookId);
        if (webhook?.status === 'active') await this.deliver(webhook, next.arg);
      }
    } finally {
      this.running = undefined;
    }
  }

  /** WC_Webhook::deliver() and log_delivery(). */
  private async deliver(webhook: WebhookState, arg: number): Promise<void> {
    const payload = this.options.payload(webhook, arg);
    if (payload === undefined) return;
    const body = wpJsonEncode(payload);
    const headers = {
      'Content-Type': 'application/json',
      'User-Agent': USER_AGENT,
      'X-WC-Webhook-Source': `${this.options.siteUrl}/`,
      'X-WC-Webhook-Topic': webhook.topic,
      'X-WC-Webhook-Resource': webhook.resource,
      'X-WC-Webhook-Event': webhook.event,
      'X-WC-Webhook-Signature': createHmac('sha256', webhook.secret).update(body).digest('base64'),
      'X-WC-Webhook-ID': String(webhook.id),
      'X-WC-Webhook-Delivery-ID': deliveryId(webhook.id),
    };
    const status = await this.post('payload', webhook, headers, body, this.options.timeoutMs);
    // 2xx, 301 and 302 are successes; anything else, or no answer, counts as a failure.
    if (status !== null && status >= 200 && status < 303) {
      webhook.failure_count = 0;
    } else if (webhook.failure_count > 5) {
      // failed_delivery(): the count is compared before it is raised, so the seventh consecutive
      // failure is the one that disables the webhook (the count then stays at 6).
      webhook.status = 'disabled';
    } else {
      webhook.failure_count += 1;
    }
  }

  private post(kind: Delivery['kind'], webhook: WebhookState, headers: Record<string, string>, body: string, timeoutMs: number) {
    const record: Delivery = { kind, webhookId: webhook.id, topic: webhook.topic, url: webhook.delivery_url, headers, body, status: null, at: new Date() };
    this.deliveries.push(record);
    return new Promise<number | null>((resolve) => {
      if (this.stopped) return resolve(null);
      const url = new URL(webhook.delivery_url);
      const send = url.protocol === 'https:' ? https.request : http.request;
      // No redirects are followed ('redirection' => 0) and no connection is kept for later.
      const req = send(url, { method: 'POST', agent: false, headers: { ...headers, 'Content-Length': Buffer.byteLength(body) }, timeout: timeoutMs });
      this.inFlight.add(req);
      let done = false;
      const finish = (status: number | null, error?: string) => {
        if (done) return;
        done = true;
        this.inFlight.delete(req);
        record.status = status;
        if (error) record.error = error;
        resolve(status);
      };
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => finish(res.statusCode ?? null));
        res.on('error', (e) => finish(null, e.message));
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on('error', (e) => finish(null, e.message));
      req.end(body);
    });
  }
}

/**
 * get_new_delivery_id(): wp_hash(webhook ID . current second). Two deliveries of one webhook within
 * the same second carry the same ID, so a receiver must not treat it as an idempotency key.
 */
function deliveryId(webhookId: number): string {
  return createHmac('md5', 'wp-salt-of-the-double').update(`${webhookId}${Math.floor(Date.now() / 1000)}`).digest('hex');
}
