/**
 * `invoicing woo serve`: the receiver for WooCommerce's deliveries, plus a node-cron poll that picks up
 * what deliveries missed (WooCommerce does not retry, and disables a webhook after repeated failures):
 * completions, payments, refunds and cancellations alike.
 */
import { AddressInfo } from 'node:net';
import { Server } from 'node:http';
import cron from 'node-cron';
import { Logger } from 'pino';
import { Change, OrderBridge, Outcome } from './bridge';
import { BridgeConfig } from './config';
import { gmtTime, WATCHED_STATUSES } from './order';
import { PartnerApi, PartnerOptions } from './partner';
import { createReceiver } from './receiver';
import { StoreOptions, WooStore } from './store';

/** Orders modified just before the cursor are looked at again: clocks and commits are not exact. */
const POLL_OVERLAP_MS = 5 * 60_000;

export interface PollResult extends Record<Change, number> {
  checked: number;
  failed: number;
  webhook_reenabled: boolean;
  /** The latest modification time (the store's clock, UTC) among the orders seen. */
  latest_modified?: string;
}

/**
 * What is done with an order that asks for something: handled here and now (`woo serve`, backfill),
 * or queued for whichever process takes it (the server), which reports no outcome.
 */
export type OrderAction = (orderId: number) => Promise<Outcome | void>;

export class Bridge {
  readonly store: WooStore;
  readonly partner: PartnerApi;
  readonly orders: OrderBridge;
  private readonly saveCursor: (cursor: string) => void;

  constructor(
    private config: BridgeConfig,
    private readonly logger: Logger,
    options: { store?: Partial<StoreOptions>; partner?: Partial<PartnerOptions>; saveCursor?: (cursor: string) => void } = {},
  ) {
    this.store = new WooStore({ storeUrl: config.store_url, consumerKey: config.consumer_key, consumerSecret: config.consumer_secret, ...options.store });
    this.partner = new PartnerApi({ apiUrl: config.api_url, apiKey: config.api_key, ...options.partner });
    this.orders = new OrderBridge(
      this.store,
      this.partner,
      { store: { url: config.store_url, id: config.store_id }, legacyOrdersBefore: config.legacy_orders_before, vatMetaKey: config.vat_meta_key },
      logger,
    );
    this.saveCursor = options.saveCursor ?? (() => undefined);
  }

  /**
   * Every completed, cancelled or refunded order changed since `since` gets what it is missing: an
   * invoice, its payment, a refund, a void (backfill and poll). Orders whose marks show nothing to do
   * cost no API call; the others are worked on ORDER_CONCURRENCY at a time.
   */
  async reconcileChangedSince(since: Date, act: OrderAction = (id) => this.orders.handle(id)): Promise<PollResult> {
    const result: PollResult = { checked: 0, invoiced: 0, paid: 0, refunded: 0, voided: 0, failed: 0, webhook_reenabled: false };
    for (let page = 1; ; page += 1) {
      const orders = await this.store.ordersChangedSince(WATCHED_STATUSES, since, page);
      await Promise.all(
        orders.map(async (order) => {
          result.checked += 1;
          const modified = gmtTime(order.date_modified_gmt);
          if (!Number.isNaN(modified) && !(modified <= gmtTime(result.latest_modified))) result.latest_modified = new Date(modified).toISOString();
          if (!this.orders.needsWork(order)) return;
          try {
            const outcome = await act(order.id);
            if (outcome?.action === 'updated') for (const change of outcome.changes) result[change] += 1;
          } catch {
            result.failed += 1; // logged by the bridge with the order id
          }
        }),
      );
      if (orders.length < 100) return result;
    }
  }

  /** One poll: what missed deliveries left undone, then the webhook turned back on if WooCommerce disabled it. */
  async poll(act?: OrderAction): Promise<PollResult> {
    const since = new Date(Date.parse(this.config.poll_cursor ?? this.config.connected_at) - POLL_OVERLAP_MS);
    const result = await this.reconcileChangedSince(since, act);
    const webhook = await this.store.webhook(this.config.webhook_id);
    if (webhook.status !== 'active') {
      await this.store.enableWebhook(this.config.webhook_id);
      this.logger.warn({ webhook_id: webhook.id, status: webhook.status }, 'the store had disabled the webhook; it is enabled again');
      result.webhook_reenabled = true;
    }
    // The cursor moves only past a clean poll, so a failed order is looked at again next time. It is
    // the store's own time of the latest change seen, so a clock difference with the store loses nothing.
    if (result.failed === 0 && result.latest_modified && result.latest_modified !== this.config.poll_cursor) {
      this.config = { ...this.config, poll_cursor: result.latest_modified };
      this.saveCursor(result.latest_modified);
    }
    return result;
  }

  /** Listens for deliveries and polls on `pollSchedule` (a cron expression). */
  async start(port: number, pollSchedule: string, host = '0.0.0.0'): Promise<{ port: number; stop: () => Promise<void> }> {
    const app = createReceiver({
      secret: this.config.webhook_secret,
      logger: this.logger,
      onOrder: (id) => void this.orders.handle(id).catch(() => undefined),
    });
    const server: Server = await new Promise((resolve, reject) => {
      const s = app.listen(port, host, () => resolve(s));
      s.once('error', reject);
    });
    let polling = false;
    const task = cron.schedule(pollSchedule, async () => {
      if (polling) return; // a slow poll is not overlapped by the next one
      polling = true;
      try {
        const result = await this.poll();
        this.logger.info(result, 'poll done');
      } catch (err) {
        this.logger.error({ err }, 'poll failed; it runs again on schedule');
      } finally {
        polling = false;
      }
    });
    return {
      port: (server.address() as AddressInfo).port,
      stop: async () => {
        await task.stop();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        // Orders under way finish rather than stop between the invoice and the order's mark.
        await this.orders.idle();
      },
    };
  }
}
