/** The shop, through WooCommerce's own REST client (OAuth 1.0a over http, Basic over https). */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import WooCommerceRestApi from '@woocommerce/woocommerce-rest-api';
import { WooOrder } from './order';

export interface StoreOptions {
  storeUrl: string;
  consumerKey: string;
  consumerSecret: string;
  timeoutMs?: number;
  /** Extra certificate authority (PEM) to trust for an https store, e.g. a self-signed one. */
  ca?: string;
  /** The agents' DNS lookup (the server's refuses private addresses, as for webhook URLs). */
  lookup?: LookupFunction;
  /** Redirects followed; default axios's 5 (a store at http:// answering with its https:// address). */
  maxRedirects?: number;
}

export interface WooWebhook {
  id: number;
  name: string;
  status: string;
  topic: string;
  delivery_url: string;
}

/** The store refused or could not be reached; `status` is 0 when there was no answer. */
export class StoreError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Under ESM the package's default export arrives wrapped once more; take the class either way. */
const RestApi: typeof WooCommerceRestApi =
  (WooCommerceRestApi as unknown as { default?: typeof WooCommerceRestApi }).default ?? WooCommerceRestApi;

export class WooStore {
  private readonly api: WooCommerceRestApi;

  constructor(options: StoreOptions) {
    this.api = new RestApi({
      url: options.storeUrl,
      consumerKey: options.consumerKey,
      consumerSecret: options.consumerSecret,
      version: 'wc/v3',
      timeout: options.timeoutMs ?? 15_000,
      // No keep-alive: a connection idle across a store restart would fail the next request for nothing.
      axiosConfig: {
        httpAgent: new http.Agent({ keepAlive: false, lookup: options.lookup }),
        httpsAgent: new https.Agent({ keepAlive: false, ca: options.ca, lookup: options.lookup }),
        ...(options.maxRedirects === undefined ? {} : { maxRedirects: options.maxRedirects }),
      },
    });
  }

  systemStatus(): Promise<{ environment?: { site_url?: string }; settings?: { currency?: string } }> {
    return this.call(() => this.api.get('system_status'));
  }

  order(id: number): Promise<WooOrder> {
    return this.call(() => this.api.get(`orders/${id}`));
  }

  /**
   * One page of the orders in `statuses` modified after `since` (UTC), by id: working on an order
   * modifies it, so pages in modification order would shift under the reader and skip orders.
   */
  ordersChangedSince(statuses: readonly string[], since: Date, page: number): Promise<WooOrder[]> {
    return this.call(() =>
      this.api.get('orders', {
        status: statuses.join(','),
        modified_after: since.toISOString(),
        dates_are_gmt: true,
        orderby: 'id',
        order: 'asc',
        per_page: 100,
        page,
      }),
    );
  }

  /** The most recently changed orders, any status (for `woo status`). */
  recentOrders(count: number): Promise<WooOrder[]> {
    return this.call(() => this.api.get('orders', { orderby: 'modified', order: 'desc', per_page: count }));
  }

  /** Writes the bridge's marks into the order's meta, in one save. WooCommerce fires order.updated for it. */
  mark(orderId: number, marks: Record<string, string>): Promise<WooOrder> {
    return this.call(() => this.api.put(`orders/${orderId}`, { meta_data: Object.entries(marks).map(([key, value]) => ({ key, value })) }));
  }

  /** A private note, for the shop owner: WooCommerce e-mails customer notes to the customer. */
  addNote(orderId: number, note: string): Promise<unknown> {
    return this.call(() => this.api.post(`orders/${orderId}/notes`, { note, customer_note: false }));
  }

  createWebhook(input: { name: string; topic: string; delivery_url: string; secret: string }): Promise<WooWebhook> {
    return this.call(() => this.api.post('webhooks', { ...input, status: 'active' }));
  }

  webhook(id: number): Promise<WooWebhook> {
    return this.call(() => this.api.get(`webhooks/${id}`));
  }

  deleteWebhook(id: number): Promise<unknown> {
    return this.call(() => this.api.delete(`webhooks/${id}`, { force: true }));
  }

  /** WooCommerce disables a webhook after repeated failed deliveries; this turns it back on. */
  enableWebhook(id: number): Promise<WooWebhook> {
    return this.updateWebhook(id, { status: 'active' });
  }

  updateWebhook(id: number, changes: Partial<Pick<WooWebhook, 'status' | 'delivery_url'>>): Promise<WooWebhook> {
    return this.call(() => this.api.put(`webhooks/${id}`, changes));
  }

  private async call<T>(request: () => Promise<{ data: T }>): Promise<T> {
    try {
      return (await request()).data;
    } catch (err) {
      const e = err as { response?: { status: number; data?: { code?: string; message?: string } }; message?: string };
      if (e.response) {
        const body = e.response.data;
        throw new StoreError(e.response.status, `store answered ${e.response.status}${body?.code ? ` ${body.code}` : ''}: ${body?.message ?? ''}`.trim());
      }
      throw new StoreError(0, `store unreachable: ${e.message ?? String(err)}`);
    }
  }
}
