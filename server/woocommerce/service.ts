/**
 * WooCommerce stores connected to the server: every process receives their deliveries, polls them
 * for what deliveries missed, and brings their orders' invoices up to date, each order by one
 * process at a time. The order logic is the bridge's (plugin/woocommerce), acting through this
 * process's own partner API with an API key of the store's business and mode, as `woo serve` acts
 * through a partner API of its own.
 *
 * A store connects through WooCommerce's app authorization: the owner opens a connect link, says
 * (or the link says) which store, approves in WordPress, and WooCommerce posts the keys to our
 * callback, which registers the webhook and keeps the store. Network calls (the store, the webhook)
 * run outside the transactions that record what they did, and what they made is undone when the
 * record fails.
 */
import { randomBytes } from 'node:crypto';
import { Knex } from 'knex';
import pLimit from 'p-limit';
import { Logger } from 'pino';
import { Outcome as OrderOutcome } from '../../plugin/woocommerce/bridge';
import { BridgeConfig, CONFIG_FORMAT } from '../../plugin/woocommerce/config';
import { normalHttpUrl, REQUIRED_SCOPES, storeIdOf, WEBHOOK } from '../../plugin/woocommerce/connection';
import { readDelivery } from '../../plugin/woocommerce/receiver';
import { Bridge } from '../../plugin/woocommerce/runner';
import { StoreError, WooStore } from '../../plugin/woocommerce/store';
import { acrossTenants, SystemActor, systemActor } from '../auth/actor';
import { BusinessService } from '../businesses/service';
import { Clock, systemClock } from '../clock';
import { Database } from '../db/database';
import { isUniqueViolation } from '../db/errors';
import { InvalidState, NotFound, ValidationFailed } from '../errors';
import { JobQueue, Outcome } from '../jobs/engine';
import { nextAttemptAfter } from '../jobs/retry-schedule';
import { SealedPlace, SecretBox } from '../keys/secret-box';
import { KeyService } from '../keys/service';
import { hashKey } from '../keys/token';
import { guardedLookup, privateHostProblem, resolvedAddressProblem } from '../keys/webhook-url';
import { POLL_DUE, WooConnectLink, WooOrderSync, WooStoreRow } from './model';
import { CALLBACK_PATH, CallbackBody, ConnectLinkInput, ConnectedStore, CreatedConnectLink, deliveryPath, linkPath, LinkState, returnPath } from './schema';
import { toConnectedStore } from './view';

/** The name WordPress shows the owner on its approval page, and in its list of REST API keys. */
const APP_NAME = 'Invoicing';
/** A connect link works for a day, until it has connected its store. */
const LINK_LIFETIME_MS = 24 * 60 * 60_000;
/** A failed poll is tried again after one interval, two, … up to this many. */
const MAX_POLL_BACKOFF = 6;

const LINK_LOOKUP = acrossTenants('woocommerce connect link');
const DELIVERY = acrossTenants('woocommerce delivery');
const POLLS = acrossTenants('woocommerce store poll');
const ORDER_SYNCS = acrossTenants('woocommerce order sync');
const OWNER_CLI = acrossTenants('cli woocommerce stores');

/** Where a store's secret is sealed: its column of its row, and nowhere else. */
function placeOf(row: Pick<WooStoreRow, 'id' | 'business_id'>, column: 'consumer_secret' | 'webhook_secret' | 'api_key'): SealedPlace {
  return { table: 'woo_stores', column, id: row.id, businessId: row.business_id };
}

const actorOf = (row: { business_id: number; livemode: boolean }) => systemActor('woocommerce connection', { businessId: row.business_id, livemode: row.livemode });

/** Why WooCommerce's post of the keys is refused: WooCommerce then deletes the keys and shows the owner an error. */
export class CallbackRefused extends Error {
  constructor(
    readonly status: 400 | 404 | 409 | 410 | 502,
    message: string,
  ) {
    super(message);
  }
}

/** How a delivery is answered. */
export type DeliveryAnswer = 'received' | 'ping' | 'unknown_store' | 'bad_signature' | 'bad_request';

export interface WooCommerceOptions {
  baseUrl: string;
  /** How often each store is polled for what deliveries missed. */
  pollEveryMs: number;
  /** Stores on private addresses are refused, as webhook URLs are, unless WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean;
}

type Done = Exclude<Outcome, 'not-attempted'>;

export class WooCommerceService {
  /** The stores' polls: each store's row, leased by one process at a time. */
  readonly polls: JobQueue<WooStoreRow>;
  /** The orders found with something to do, worked one process at a time per order. */
  readonly orders: JobQueue<WooOrderSync>;
  /** This process's own partner API, which the bridge calls; set once the server listens. */
  private apiUrl?: string;
  /**
   * Each store's bridge for its orders, kept while its keys are the same: it remembers our tax rate
   * for each shop rate, which a bridge made per order would look up again for every order.
   */
  private readonly orderBridges = new Map<number, { keys: string; bridge: Bridge }>();

  constructor(
    private readonly db: Database,
    private readonly keys: KeyService,
    private readonly businesses: BusinessService,
    private readonly secrets: SecretBox,
    private readonly logger: Logger,
    private readonly options: WooCommerceOptions,
    private readonly clock: Clock = systemClock,
  ) {
    this.polls = new JobQueue(db, logger, {
      label: 'WooCommerce store poll',
      model: WooStoreRow,
      access: POLLS,
      batch: 4,
      leaseSeconds: 600,
      clock,
      // A store that cannot be read is polled again later, never given up on: `failed` is never reached.
      schedule: (attemptsMade, now) => new Date(now.getTime() + Math.min(attemptsMade, MAX_POLL_BACKOFF) * options.pollEveryMs),
      statuses: { done: POLL_DUE, failed: 'failed' },
      work: (store) => this.poll(store),
    });
    this.orders = new JobQueue(db, logger, {
      label: 'WooCommerce order',
      model: WooOrderSync,
      access: ORDER_SYNCS,
      batch: 4,
      leaseSeconds: 300,
      clock,
      schedule: nextAttemptAfter,
      statuses: { done: 'done', failed: 'failed' },
      work: (sync) => this.syncOrder(sync),
    });
  }

  /** The partner API the bridge calls from this process (its own listening address). */
  serveAt(apiUrl: string): void {
    this.apiUrl = apiUrl;
  }

  // ------------------------------------------------------------------------------------------
  // Connecting

  /** A connect link for the owner to open (`invoicing woo connect-link`); `input` is valid by connectLinkSchema. */
  async createLink(input: ConnectLinkInput): Promise<CreatedConnectLink> {
    const business = await this.businesses.get(input.businessId);
    if (input.storeUrl) {
      const problem = await this.storeAddressProblem(input.storeUrl);
      if (problem) throw new ValidationFailed({ storeUrl: [problem] });
    }
    const token = randomBytes(24).toString('base64url');
    const actor = systemActor('woocommerce connection', { businessId: business.id, livemode: input.mode === 'live' });
    const expiresAt = new Date(this.clock.now().getTime() + LINK_LIFETIME_MS).toISOString();
    await this.db.transaction((trx) =>
      WooConnectLink.create(actor, trx, { token_hash: hashKey(token), store_url: input.storeUrl ?? null, store_url_fixed: input.storeUrl !== undefined, expires_at: expiresAt }),
    );
    return {
      url: `${this.options.baseUrl}${linkPath(token)}`,
      business: { id: business.id, name: business.name },
      livemode: actor.livemode,
      store_url: input.storeUrl ?? null,
      expires_at: expiresAt,
      callback_url: `${this.options.baseUrl}${CALLBACK_PATH}`,
    };
  }

  /** The connect page's state. A link that connected a store is used, even once that store is disconnected. */
  async openLink(token: string): Promise<LinkState> {
    const link = await this.findLink(token);
    if (!link) return { kind: 'unknown' };
    const { name: businessName } = await this.businesses.get(link.business_id);
    if (link.connected_at !== null) {
      const store = link.woo_store_id === null ? undefined : await WooStoreRow.of(actorOf(link), this.db.current).findById(link.woo_store_id);
      return store ? { kind: 'connected', link, businessName, storeUrl: store.store_url } : { kind: 'expired' };
    }
    if (Date.parse(link.expires_at) <= this.clock.now().getTime()) return { kind: 'expired' };
    return { kind: 'open', link, businessName, authorizeUrl: link.store_url ? this.authorizeUrl(token, link.store_url, businessName) : null };
  }

  /**
   * The store's address as the owner typed it on the connect page: the link's new state, or the
   * state it still has with why the address was refused.
   */
  async chooseStore(token: string, typed: string): Promise<{ state: LinkState; problem?: string }> {
    const state = await this.openLink(token);
    if (state.kind !== 'open' || state.link.store_url_fixed) return { state };
    // An owner types `shop.example.com` as often as the whole address: https is what a store runs on.
    const storeUrl = normalHttpUrl(/^[a-z][a-z0-9+.-]*:\/\//i.test(typed) ? typed : `https://${typed}`);
    if (!storeUrl) {
      return { state, problem: typed ? 'This is not a web address: enter it as shop.example.com or https://shop.example.com' : 'Enter your store\'s address, such as https://shop.example.com' };
    }
    const problem = await this.storeAddressProblem(storeUrl);
    if (problem) return { state, problem };
    await WooConnectLink.of(actorOf(state.link), this.db.current).findById(state.link.id).patch({ store_url: storeUrl });
    return { state: await this.openLink(token) };
  }

  /**
   * WooCommerce's post of the keys the owner approved (`user_id` is the link's token). The keys are
   * checked on the store, the webhook registered, and the store kept with its secrets sealed; a
   * store already connected to the business and mode gets the new keys and webhook. A store is
   * connected to one business and mode at a time: the bridge's marks on its orders name one
   * invoice each. Any refusal makes WooCommerce delete the keys, and nothing stays behind here.
   */
  async connectFromCallback(body: CallbackBody): Promise<ConnectedStore> {
    const link = await this.findLink(body.user_id);
    if (!link) throw new CallbackRefused(404, 'Unknown connect link');
    if (link.connected_at !== null || Date.parse(link.expires_at) <= this.clock.now().getTime()) throw new CallbackRefused(410, 'This connect link has been used or has expired');
    if (!link.store_url) throw new CallbackRefused(400, 'This connect link has no store address yet');
    if (body.key_permissions !== 'read_write') throw new CallbackRefused(400, `The key must be read_write, not ${body.key_permissions}: the bridge writes order notes and webhooks`);
    const storeUrl = link.store_url;
    const problem = await this.storeAddressProblem(storeUrl);
    if (problem) throw new CallbackRefused(400, problem);
    const actor = actorOf(link);
    const storeKey = storeIdOf(storeUrl);
    const elsewhere = await WooStoreRow.acrossTenants(LINK_LOOKUP, this.db.current)
      .where({ store_key: storeKey })
      .whereNot((q) => {
        q.where({ business_id: actor.businessId, livemode: actor.livemode });
      })
      .first();
    if (elsewhere) throw new CallbackRefused(409, `${storeUrl} is connected to another business or mode: disconnect it there first`);
    const store = this.storeClient(storeUrl, body.consumer_key, body.consumer_secret);
    try {
      // system_status needs a shop manager's key; an orders read proves a narrower key works too.
      await store.systemStatus().catch(() => store.recentOrders(1));
    } catch (err) {
      throw new CallbackRefused(502, `The store at ${storeUrl} did not accept its own keys: ${(err as Error).message}`);
    }
    const previous = await WooStoreRow.of(actor, this.db.current).findOne({ store_key: storeKey });
    const publicId = previous?.public_id ?? randomBytes(16).toString('hex');
    const webhookSecret = randomBytes(32).toString('base64url');
    const webhook = await this.registerWebhook(store, storeUrl, publicId, webhookSecret);
    const keys = { consumer_key: body.consumer_key, consumer_secret: body.consumer_secret, key_permissions: body.key_permissions, wc_key_id: body.key_id };
    let row: WooStoreRow;
    try {
      row = await this.db.transaction(async (trx) => {
        const stillOpen = await WooConnectLink.of(actor, trx).findById(link.id).whereNull('connected_at').forUpdate();
        if (!stillOpen) throw new CallbackRefused(410, 'This connect link has been used or has expired');
        const saved = previous
          ? await this.replaceKeys(trx, actor, previous, keys, { id: webhook.id, secret: webhookSecret })
          : await this.insertStore(trx, actor, { store_url: storeUrl, public_id: publicId, ...keys }, { id: webhook.id, secret: webhookSecret });
        await WooConnectLink.of(actor, trx).findById(link.id).patch({ woo_store_id: saved.id, connected_at: this.clock.now().toISOString() });
        return saved;
      });
    } catch (err) {
      await store.deleteWebhook(webhook.id).catch(() => undefined);
      // Another link of the same store and business connected it at the same moment.
      if (isUniqueViolation(err)) throw new CallbackRefused(409, `${storeUrl} was connected by another link just now`);
      throw err;
    }
    // The old webhook, signed with the old secret, would only be refused.
    if (previous && previous.webhook_id !== webhook.id) await store.deleteWebhook(previous.webhook_id).catch(() => undefined);
    this.logger.info({ woo_store: row.id, business_id: row.business_id, livemode: row.livemode }, `WooCommerce store ${storeUrl} connected`);
    return toConnectedStore(row);
  }

  // ------------------------------------------------------------------------------------------
  // Deliveries, polls and orders

  /** A delivery of a store's webhook: verified with the store's secret, its order queued. */
  async receiveDelivery(publicId: string, body: Buffer, header: (name: string) => string | undefined): Promise<DeliveryAnswer> {
    const store = /^[0-9a-f]{32}$/.test(publicId) ? await WooStoreRow.acrossTenants(DELIVERY, this.db.current).findOne({ public_id: publicId }) : undefined;
    if (!store) return readDelivery(body, header, '').kind === 'ping' ? 'ping' : 'unknown_store';
    const delivery = readDelivery(body, header, this.secrets.open(store.webhook_secret, placeOf(store, 'webhook_secret')));
    if (delivery.kind !== 'order') return delivery.kind;
    if (delivery.orderId !== null) await this.queueOrder(store, delivery.orderId);
    return 'received';
  }

  /**
   * Queues the order's sync, due now, and sweeps the queue after the commit. An order being worked
   * on is marked instead: its run may have read it before this change, so it is due again after it.
   * Read committed (MySQL): two deliveries of a new order meet at its unique key, not in a deadlock
   * over the gap locks of their lookups.
   */
  private async queueOrder(store: WooStoreRow, orderId: number): Promise<void> {
    const actor = actorOf(store);
    const due = { status: 'pending' as const, attempts: 0, next_attempt_at: this.clock.now().toISOString(), again: false };
    const queued = await this.db.transaction(
      async (trx) => {
        const existing = await WooOrderSync.of(actor, trx).findOne({ woo_store_id: store.id, order_id: orderId }).forUpdate();
        if (!existing) {
          try {
            await WooOrderSync.create(actor, trx, { woo_store_id: store.id, order_id: orderId, lease_id: null, outcome: null, ...due });
          } catch (err) {
            // Another process queued it at the same moment: that one is the order's.
            if (isUniqueViolation(err)) return false;
            throw err;
          }
        } else if (existing.status === 'pending' && existing.lease_id !== null) {
          await existing.$query(trx).patch({ again: true });
          return false;
        } else {
          await existing.$query(trx).patch({ ...due, lease_id: null });
        }
        // A sweep, not a run of this row alone: a poll that finds hundreds of orders works them a batch at a time.
        this.db.afterCommit(() => this.orders.nudge());
        return true;
      },
      { readCommitted: true },
    );
    if (queued) this.logger.debug({ woo_store: store.id, order_id: orderId }, 'WooCommerce order queued');
  }

  /**
   * One order brought up to date by the bridge; a refusal is noted on the order by the bridge, and
   * is done here. The run ends its own lease: done, unless a delivery marked the order meanwhile,
   * when it is due again at once. Each is one conditional write under the lease, so a mark lands
   * either before it (and is seen) or after it (on a row no longer leased, which it queues).
   */
  private async syncOrder(sync: WooOrderSync): Promise<Done> {
    const store = await WooStoreRow.acrossTenants(ORDER_SYNCS, this.db.current).findById(sync.woo_store_id);
    if (!store) return { done: { outcome: 'the store was disconnected' } };
    let outcome: string;
    try {
      outcome = describeOutcome(await this.orderBridgeOf(store).orders.handle(sync.order_id));
    } catch (err) {
      return { failed: { outcome: (err as Error).message.slice(0, 1000) } };
    }
    const leased = WooOrderSync.acrossTenants(ORDER_SYNCS, this.db.current).where({ id: sync.id, lease_id: sync.lease_id, status: 'pending' });
    const done = await leased.clone().where({ again: false }).patch({ status: 'done', outcome, lease_id: null });
    if (!done) {
      await leased.clone().where({ again: true }).patch({ again: false, outcome, lease_id: null, next_attempt_at: this.clock.now().toISOString() });
      this.orders.nudge();
    }
    // The engine's record finds the row released already, and writes nothing.
    return { done: { outcome } };
  }

  /**
   * One poll of a store: its syncs that ran out of retries are tried again, the orders changed since
   * the cursor that ask for something are queued (one at a time: each is a transaction), and the
   * webhook is turned back on if WooCommerce disabled it. The cursor is written with the outcome,
   * under the poll's lease.
   */
  private async poll(store: WooStoreRow): Promise<Done> {
    const now = this.clock.now();
    const actor = actorOf(store);
    try {
      await WooOrderSync.of(actor, this.db.current)
        .where({ woo_store_id: store.id, status: 'failed' })
        .patch({ status: 'pending', attempts: 0, next_attempt_at: now.toISOString(), lease_id: null, again: false });
      let cursor: string | undefined;
      const bridge = this.bridgeOf(store, (latest) => (cursor = latest));
      const oneAtATime = pLimit(1);
      const result = await bridge.poll((orderId) => oneAtATime(() => this.queueOrder(store, orderId)));
      this.orders.nudge();
      this.logger.info({ woo_store: store.id, checked: result.checked, failed: result.failed, webhook_reenabled: result.webhook_reenabled }, 'WooCommerce store polled');
      return {
        done: {
          attempts: 0,
          last_polled_at: now.toISOString(),
          last_error: null,
          next_attempt_at: new Date(now.getTime() + this.options.pollEveryMs).toISOString(),
          ...(cursor ? { poll_cursor: cursor } : {}),
        },
      };
    } catch (err) {
      this.logger.warn({ err, woo_store: store.id }, 'WooCommerce store poll failed; it is polled again later');
      return { failed: { last_polled_at: now.toISOString(), last_error: (err as Error).message.slice(0, 1000) } };
    }
  }

  private orderBridgeOf(store: WooStoreRow): Bridge {
    const keys = `${store.consumer_key} ${store.webhook_id} ${store.api_key_id}`;
    const kept = this.orderBridges.get(store.id);
    if (kept?.keys === keys) return kept.bridge;
    const bridge = this.bridgeOf(store);
    this.orderBridges.set(store.id, { keys, bridge });
    return bridge;
  }

  /** The bridge of a stored store, acting through this process's partner API with the store's own key. */
  private bridgeOf(store: WooStoreRow, saveCursor?: (cursor: string) => void): Bridge {
    if (!this.apiUrl) throw new Error('The WooCommerce bridge runs only in a serving process');
    return new Bridge(this.bridgeConfig(store, this.apiUrl), this.logger.child({ woo_store: store.id }), { store: this.storeGuard(), saveCursor });
  }

  private bridgeConfig(store: WooStoreRow, apiUrl: string): BridgeConfig {
    return {
      store_url: store.store_url,
      consumer_key: store.consumer_key,
      consumer_secret: this.secrets.open(store.consumer_secret, placeOf(store, 'consumer_secret')),
      api_url: apiUrl,
      api_key: this.secrets.open(store.api_key, placeOf(store, 'api_key')),
      bridge_url: this.options.baseUrl,
      store_id: store.store_key,
      webhook_id: store.webhook_id,
      webhook_secret: this.secrets.open(store.webhook_secret, placeOf(store, 'webhook_secret')),
      connected_at: store.connected_at,
      format: CONFIG_FORMAT,
      ...(store.poll_cursor ? { poll_cursor: store.poll_cursor } : {}),
      ...(store.legacy_orders_before ? { legacy_orders_before: store.legacy_orders_before } : {}),
      ...(store.vat_meta_key ? { vat_meta_key: store.vat_meta_key } : {}),
    };
  }

  // ------------------------------------------------------------------------------------------
  // The owner's commands

  /** The stores connected to a business, both modes, oldest first. */
  async list(businessId: number): Promise<ConnectedStore[]> {
    await this.businesses.get(businessId);
    const rows = await WooStoreRow.acrossTenants(OWNER_CLI, this.db.current).where({ business_id: businessId }).orderBy('id');
    return rows.map(toConnectedStore);
  }

  /**
   * Disconnects a store: its webhook deleted at the store (if it answers), the bridge's API key
   * revoked and the store forgotten, with its order syncs. WooCommerce has no API to delete a REST
   * key: the owner revokes it in WooCommerce > Settings > Advanced > REST API.
   */
  async disconnect(businessId: number, storeId: number): Promise<{ store: ConnectedStore; webhook_deleted: boolean; webhook_error: string | null }> {
    const row = await WooStoreRow.acrossTenants(OWNER_CLI, this.db.current).findOne({ id: storeId, business_id: businessId });
    if (!row) throw new NotFound('WooCommerce store', storeId);
    const store = this.storeClient(row.store_url, row.consumer_key, this.secrets.open(row.consumer_secret, placeOf(row, 'consumer_secret')));
    const webhookError = await store.deleteWebhook(row.webhook_id).then(
      () => null,
      (err: unknown) => (err instanceof StoreError && err.status === 404 ? null : (err as Error).message),
    );
    // Its order syncs go with it, and its links stay used (the schema's foreign keys).
    await this.db.transaction(async (trx) => {
      await WooStoreRow.of(actorOf(row), trx).findById(row.id).delete();
      await this.keys.revoke(row.api_key_id);
    });
    return { store: toConnectedStore(row), webhook_deleted: webhookError === null, webhook_error: webhookError };
  }

  /**
   * A store of the separate bridge's configuration file, moved into the server: the file's API key
   * names the business and mode (the bridge gets a key of its own), the store's identity and poll
   * cursor are kept (so no order is invoiced twice), and its webhook is pointed at this server once
   * the store is kept; if that fails, the store is forgotten again and the webhook left as it was.
   */
  async importConfig(config: BridgeConfig): Promise<ConnectedStore> {
    const credential = await this.keys.authenticate(config.api_key);
    if (!credential || credential.kind !== 'api_key') throw new InvalidState('The file\'s API key is not a working key of this server');
    const storeUrl = normalHttpUrl(config.store_url);
    if (!storeUrl) throw new InvalidState(`The file's store_url is not a store's http(s) address: ${config.store_url}`);
    const actor = systemActor('woocommerce connection', { businessId: credential.businessId, livemode: credential.livemode });
    const connected = await WooStoreRow.acrossTenants(OWNER_CLI, this.db.current).whereIn('store_key', [config.store_id, storeIdOf(storeUrl)]).first();
    if (connected) throw new InvalidState(`${storeUrl} is already connected to business ${connected.business_id} (store ${connected.id})`);
    const publicId = randomBytes(16).toString('hex');
    const kept = {
      store_key: config.store_id,
      connected_at: config.connected_at,
      poll_cursor: config.poll_cursor ?? null,
      legacy_orders_before: config.legacy_orders_before ?? null,
      vat_meta_key: config.vat_meta_key ?? null,
    };
    const keys = { store_url: storeUrl, public_id: publicId, consumer_key: config.consumer_key, consumer_secret: config.consumer_secret, key_permissions: 'read_write' as const, wc_key_id: null };
    const row = await this.db
      .transaction((trx) => this.insertStore(trx, actor, keys, { id: config.webhook_id, secret: config.webhook_secret }, kept))
      .catch((err: unknown) => {
        if (isUniqueViolation(err)) throw new InvalidState(`${storeUrl} was connected just now, by another import or link`);
        throw err;
      });
    const store = this.storeClient(storeUrl, config.consumer_key, config.consumer_secret);
    try {
      await store.updateWebhook(config.webhook_id, { delivery_url: `${this.options.baseUrl}${deliveryPath(publicId)}`, status: 'active' });
    } catch (err) {
      // The store may have moved the webhook before the answer was lost: it goes back to the bridge apart.
      await store.updateWebhook(config.webhook_id, { delivery_url: `${config.bridge_url}/woocommerce/webhook` }).catch(() => undefined);
      await this.db
        .transaction(async (trx) => {
          await WooStoreRow.of(actor, trx).findById(row.id).delete();
          await this.keys.revoke(row.api_key_id);
        })
        .catch((undoErr: unknown) => this.logger.error({ err: undoErr, woo_store: row.id }, 'an import that failed left its store row: disconnect it'));
      throw err;
    }
    return toConnectedStore(row);
  }

  // ------------------------------------------------------------------------------------------

  private async findLink(token: string): Promise<WooConnectLink | undefined> {
    if (!/^[A-Za-z0-9_-]{16,64}$/.test(token)) return undefined;
    return WooConnectLink.acrossTenants(LINK_LOOKUP, this.db.current).findOne({ token_hash: hashKey(token) });
  }

  /** Why the server will not call this store: an address in a private network, as for webhook URLs. */
  private async storeAddressProblem(storeUrl: string): Promise<string | null> {
    if (this.options.allowPrivate) return null;
    const blocked = privateHostProblem(new URL(storeUrl)) ?? (await resolvedAddressProblem(storeUrl, false));
    return blocked ? `${storeUrl} is in a private network, which the server does not call (set WEBHOOK_ALLOW_PRIVATE=true for local development)` : null;
  }

  /** WooCommerce's app authorization for this link: WordPress asks the owner, then posts the keys to our callback. */
  private authorizeUrl(token: string, storeUrl: string, businessName: string): string {
    const params = new URLSearchParams({
      // WooCommerce decodes its parameters more than once: a `&`, `%` or `+` in the name would cut or change it.
      app_name: `${APP_NAME} (${businessName.replace(/[&%+#]/g, ' ').replace(/\s+/g, ' ').trim()})`,
      scope: 'read_write',
      user_id: token,
      return_url: `${this.options.baseUrl}${returnPath(token)}`,
      callback_url: `${this.options.baseUrl}${CALLBACK_PATH}`,
    });
    return `${storeUrl}/wc-auth/v1/authorize?${params.toString()}`;
  }

  private storeClient(storeUrl: string, consumerKey: string, consumerSecret: string): WooStore {
    return new WooStore({ storeUrl, consumerKey, consumerSecret, ...this.storeGuard() });
  }

  /**
   * Every call to a store is checked where it connects and follows no redirect, as webhook
   * deliveries are: a store address judged public once cannot lead the server into a private network.
   */
  private storeGuard(): { lookup?: ReturnType<typeof guardedLookup>; maxRedirects: number } {
    return { maxRedirects: 0, ...(this.options.allowPrivate ? {} : { lookup: guardedLookup(false) }) };
  }

  private registerWebhook(store: WooStore, storeUrl: string, publicId: string, secret: string) {
    return store.createWebhook({ ...WEBHOOK, delivery_url: `${this.options.baseUrl}${deliveryPath(publicId)}`, secret }).catch((err: unknown) => {
      throw new CallbackRefused(502, `The store at ${storeUrl} refused the webhook: ${(err as Error).message}`);
    });
  }

  /** A new store row with an API key of its own for the bridge, its secrets sealed in place (the row's id binds them). */
  private async insertStore(
    trx: Knex.Transaction,
    actor: SystemActor,
    store: Pick<WooStoreRow, 'store_url' | 'public_id' | 'consumer_key' | 'key_permissions' | 'wc_key_id'> & { consumer_secret: string },
    webhook: { id: number; secret: string },
    kept: Partial<Pick<WooStoreRow, 'store_key' | 'connected_at' | 'poll_cursor' | 'legacy_orders_before' | 'vat_meta_key'>> = {},
  ): Promise<WooStoreRow> {
    const now = this.clock.now().toISOString();
    const apiKey = await this.keys.create({ businessId: actor.businessId, mode: actor.livemode ? 'live' : 'test', scopes: [...REQUIRED_SCOPES] });
    const inserted = await WooStoreRow.create(actor, trx, {
      public_id: store.public_id,
      store_url: store.store_url,
      store_key: kept.store_key ?? storeIdOf(store.store_url),
      consumer_key: store.consumer_key,
      consumer_secret: '',
      key_permissions: store.key_permissions,
      wc_key_id: store.wc_key_id,
      webhook_id: webhook.id,
      webhook_secret: '',
      api_key_id: apiKey.id,
      api_key: '',
      vat_meta_key: kept.vat_meta_key ?? null,
      connected_at: kept.connected_at ?? now,
      poll_cursor: kept.poll_cursor ?? null,
      legacy_orders_before: kept.legacy_orders_before ?? null,
      last_polled_at: null,
      last_error: null,
      status: POLL_DUE,
      attempts: 0,
      next_attempt_at: new Date(Date.parse(now) + this.options.pollEveryMs).toISOString(),
      lease_id: null,
    });
    const sealed = {
      consumer_secret: this.secrets.seal(store.consumer_secret, placeOf(inserted, 'consumer_secret')),
      webhook_secret: this.secrets.seal(webhook.secret, placeOf(inserted, 'webhook_secret')),
      api_key: this.secrets.seal(apiKey.key, placeOf(inserted, 'api_key')),
    };
    await WooStoreRow.of(actor, trx).findById(inserted.id).patch(sealed);
    return Object.assign(inserted, sealed);
  }

  /** A connected store's new keys and webhook (connected again); its identity, cursor and API key stay. */
  private async replaceKeys(
    trx: Knex.Transaction,
    actor: SystemActor,
    row: WooStoreRow,
    keys: Pick<WooStoreRow, 'consumer_key' | 'key_permissions' | 'wc_key_id'> & { consumer_secret: string },
    webhook: { id: number; secret: string },
  ): Promise<WooStoreRow> {
    const patch = {
      ...keys,
      consumer_secret: this.secrets.seal(keys.consumer_secret, placeOf(row, 'consumer_secret')),
      webhook_id: webhook.id,
      webhook_secret: this.secrets.seal(webhook.secret, placeOf(row, 'webhook_secret')),
      last_error: null,
    };
    await WooStoreRow.of(actor, trx).findById(row.id).patch(patch);
    return Object.assign(row, patch);
  }
}

function describeOutcome(outcome: OrderOutcome): string {
  const text = outcome.action === 'updated' ? `invoice ${outcome.number ?? outcome.invoice_id}: ${outcome.changes.join(', ')}` : `${outcome.action}: ${outcome.reason}`;
  return text.slice(0, 1000);
}
