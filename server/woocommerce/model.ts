import { TenantModel } from '../db/tenant-model';

/** The permissions a WooCommerce REST API key holds (WooCommerce > Settings > Advanced > REST API). */
export const KEY_PERMISSIONS = ['read', 'write', 'read_write'] as const;
export type KeyPermissions = (typeof KEY_PERMISSIONS)[number];

/** A connected store's row is the leased job of its poll: it stays `pending`, due again at `next_attempt_at`. */
export const POLL_DUE = 'pending';

/**
 * A WooCommerce store connected to a business and mode. Its secrets are sealed in their columns
 * (service.ts opens them); the row is also the leased job of the store's poll (jobs/lease.ts).
 */
export class WooStoreRow extends TenantModel {
  static override tableName = 'woo_stores';
  static override timestampColumns = ['created_at', 'updated_at', 'connected_at', 'poll_cursor', 'legacy_orders_before', 'last_polled_at', 'next_attempt_at'];

  /** In the URL WooCommerce delivers to: unguessable, so a store's deliveries name it without an id to enumerate. */
  public_id!: string;
  /** Normalised (lower-case host, no trailing slash): one store, one URL. */
  store_url!: string;
  /** A short hash of the store URL (storeIdOf): part of the bridge's idempotency keys; one connection per store. */
  store_key!: string;
  consumer_key!: string;
  /** Sealed. */
  consumer_secret!: string;
  key_permissions!: KeyPermissions;
  /** WooCommerce's id of the key (null for a store imported from a file). */
  wc_key_id!: number | null;
  webhook_id!: number;
  /** Sealed. */
  webhook_secret!: string;
  /** The API key the bridge acts with (invoices:write, clients:write), in the store's mode; its token sealed in `api_key`. */
  api_key_id!: number;
  api_key!: string;
  vat_meta_key!: string | null;
  connected_at!: string;
  /** Orders modified after this time (the store's clock) are polled next. */
  poll_cursor!: string | null;
  /** A store imported from the earlier bridge's file: orders from before then may have invoices known by their notes only. */
  legacy_orders_before!: string | null;
  last_polled_at!: string | null;
  last_error!: string | null;
  status!: string;
  attempts!: number;
  next_attempt_at!: string | null;
  lease_id!: string | null;
}

/** A link an owner opens to connect a store through WooCommerce's app authorization (its token is hashed). */
export class WooConnectLink extends TenantModel {
  static override tableName = 'woo_connect_links';
  static override booleanColumns = ['livemode', 'store_url_fixed'];
  static override timestampColumns = ['created_at', 'updated_at', 'connected_at', 'expires_at'];

  token_hash!: string;
  /** Null until the owner gives it on the page. */
  store_url!: string | null;
  /** Given with the link (`--store-url`): the page does not offer another. */
  store_url_fixed!: boolean;
  /** The store it connected, once WooCommerce posted the keys. */
  woo_store_id!: number | null;
  connected_at!: string | null;
  expires_at!: string;
}

/** An order of a connected store with something to do: a leased job, one process at a time per order. */
export class WooOrderSync extends TenantModel {
  static override tableName = 'woo_order_syncs';
  static override booleanColumns = ['livemode', 'again'];
  static override timestampColumns = ['created_at', 'updated_at', 'next_attempt_at'];

  woo_store_id!: number;
  order_id!: number;
  status!: 'pending' | 'done' | 'failed';
  attempts!: number;
  next_attempt_at!: string | null;
  lease_id!: string | null;
  /** What the last attempt came to (the bridge's outcome, or why it failed). */
  outcome!: string | null;
  /** A delivery came while the order was being worked: the lease works it once more. */
  again!: boolean;
}
