/** The delivery log and replays, for the partner API (a key's own deliveries) and the CLI. */
import { acrossTenants } from '../auth/actor';
import { Credential } from '../auth/credential';
import { grants } from '../auth/scopes';
import { Database } from '../db/database';
import { Forbidden, InvalidState, NotFound } from '../errors';
import { Clock } from '../clock';
import { toDbTime } from '../db/time';
import { EventType } from '../events/model';
import { Outbox, readScopeOf } from '../events/outbox';
import { Page, paginate } from '../http/pagination';
import { ApiKey } from '../keys/model';
import { DeliveryStatus, WebhookAttempt, WebhookDelivery } from './model';
import { AttemptView, DeliveryListParams, DeliveryView } from './schema';
import { DeliveryRow, toAttemptView, toDeliveryView } from './view';

/** The CLI's view of the whole log: any business, any key. */
export interface DeliveryLogFilter {
  businessId?: number;
  keyId?: number;
  /** Deliveries to this OAuth app's webhook URL. */
  appId?: number;
  status?: DeliveryStatus;
  event?: EventType;
  /** Deliveries created at or after this time. */
  since?: Date;
  /** Newest first; default 100, at most 1000. */
  limit?: number;
}

export interface ReplayFilter {
  businessId?: number;
  keyId?: number;
  /** Deliveries created at or after this time. */
  since?: Date;
  /** Also the deliveries still retrying on their schedule (pending after a failed attempt), sent again now. */
  includeRetrying?: boolean;
}

/** The owner's CLI reads and replays the deliveries of every business. */
const OWNER = acrossTenants('cli delivery log');

export const DEFAULT_LOG_LIMIT = 100;
export const MAX_LOG_LIMIT = 1000;

export class WebhookService {
  constructor(
    private readonly db: Database,
    private readonly outbox: Outbox,
    private readonly clock: Clock,
  ) {}

  /** The deliveries to the calling key's webhook URL. */
  list(cred: Credential, params: DeliveryListParams): Promise<Page<DeliveryView>> {
    const query = this.deliveriesOf(cred);
    if (params.status) query.where('webhook_deliveries.status', params.status);
    if (params.event) query.where('events.type', params.event);
    return paginate(query, WebhookDelivery.tableName, params, (row) => toDeliveryView(row as DeliveryRow));
  }

  async get(cred: Credential, id: number): Promise<{ delivery: DeliveryView; attempts: AttemptView[] }> {
    const row = (await this.deliveriesOf(cred).findById(id)) as DeliveryRow | undefined;
    if (!row) throw new NotFound('Webhook delivery', id);
    return { delivery: toDeliveryView(row), attempts: await this.attemptsOf(row) };
  }

  /**
   * Sends the delivery again with a fresh retry schedule, to the key's current webhook URL; the
   * payload, and so its idempotency_key, is the event's own. A delivery under way is left to finish.
   */
  async replay(cred: Credential, id: number): Promise<DeliveryView> {
    // Only what the credential could read now: a key whose scopes were narrowed since does not get the event again.
    const own = (await this.deliveriesOf(cred).findById(id)) as DeliveryRow | undefined;
    if (!own) throw new NotFound('Webhook delivery', id);
    if (!grants(cred.scopes, readScopeOf(own.event_type))) throw new Forbidden(readScopeOf(own.event_type), cred.scopes);
    const replayed = await this.replayable(WebhookDelivery.of(cred, this.db.current).where({ id }).where(ownDeliveries(cred))).patch(this.replayPatch());
    const { delivery } = await this.get(cred, id);
    if (replayed) this.outbox.deliveriesDue();
    else await this.assertKeyHasUrl(delivery);
    return delivery;
  }

  /** Admin (CLI): the delivery log of every business and key, newest first. */
  async log(filter: DeliveryLogFilter = {}): Promise<DeliveryView[]> {
    const query = this.withEvents(WebhookDelivery.acrossTenants(OWNER, this.db.current));
    if (filter.businessId !== undefined) query.where('webhook_deliveries.business_id', filter.businessId);
    if (filter.keyId !== undefined) query.where('webhook_deliveries.api_key_id', filter.keyId);
    if (filter.appId !== undefined) query.where('webhook_deliveries.app_id', filter.appId);
    if (filter.status) query.where('webhook_deliveries.status', filter.status);
    if (filter.event) query.where('events.type', filter.event);
    if (filter.since) query.where('webhook_deliveries.created_at', '>=', toDbTime(filter.since));
    const limit = Math.min(Math.max(1, Math.floor(filter.limit ?? DEFAULT_LOG_LIMIT)), MAX_LOG_LIMIT);
    const rows = await query.orderBy('webhook_deliveries.id', 'desc').limit(limit);
    return rows.map((row) => toDeliveryView(row as DeliveryRow));
  }

  /** Admin (CLI): one delivery of any business, with its attempts. */
  async find(id: number): Promise<{ delivery: DeliveryView; attempts: AttemptView[] }> {
    const row = (await this.withEvents(WebhookDelivery.acrossTenants(OWNER, this.db.current)).findById(id)) as DeliveryRow | undefined;
    if (!row) throw new NotFound('Webhook delivery', id);
    return { delivery: toDeliveryView(row), attempts: await this.attemptsOf(row) };
  }

  /**
   * Admin (CLI): makes one delivery of any business pending again, with a fresh retry schedule.
   * `replayed` is false when the delivery was under way (claimed by a worker): it is left to finish.
   */
  async replayOne(id: number): Promise<{ delivery: DeliveryView; replayed: boolean }> {
    const replayed = await this.replayable(WebhookDelivery.acrossTenants(OWNER, this.db.current).where({ id })).patch(this.replayPatch());
    const { delivery } = await this.find(id);
    if (replayed) this.outbox.deliveriesDue();
    else await this.assertKeyHasUrl(delivery);
    return { delivery, replayed: replayed > 0 };
  }

  /** Admin (CLI): makes every failed delivery that matches, of a key that has a URL, pending again; returns their ids. */
  async replayFailed(filter: ReplayFilter = {}): Promise<number[]> {
    const ids = await this.db.transaction(async (trx) => {
      const query = this.matching(WebhookDelivery.acrossTenants(OWNER, trx), filter).select('id').orderBy('id').forUpdate();
      const found = (await query).map((row) => row.id);
      for (let i = 0; i < found.length; i += 500) {
        await this.matching(WebhookDelivery.acrossTenants(OWNER, trx).whereIn('id', found.slice(i, i + 500)), filter).patch(this.replayPatch());
      }
      return found;
    });
    if (ids.length) this.outbox.deliveriesDue();
    return ids;
  }

  /** Admin (CLI): how many deliveries the filter names are still retrying (not failed yet), so `replay --failed` leaves them. */
  async retrying(filter: Omit<ReplayFilter, 'includeRetrying'> = {}): Promise<number> {
    const query = this.matching(WebhookDelivery.acrossTenants(OWNER, this.db.current), { ...filter, includeRetrying: false }, 'pending').where('attempts', '>', 0);
    const [{ n }] = (await query.count({ n: '*' })) as unknown as [{ n: number | string }];
    return Number(n);
  }

  /**
   * Replayable deliveries (not under way, their key has a URL) that `filter` names: failed ones, and
   * with `includeRetrying` the pending ones with a failed attempt; `status` overrides the statuses.
   */
  private matching<Q extends ReturnType<typeof WebhookDelivery.of>>(query: Q, filter: ReplayFilter, status?: 'pending'): Q {
    if (status) query.where('status', status);
    else if (filter.includeRetrying) {
      query.where((either) => {
        void either.where('status', 'failed').orWhere((retrying) => {
          void retrying.where('status', 'pending').where('attempts', '>', 0);
        });
      });
    }
    else query.where('status', 'failed');
    if (filter.businessId !== undefined) query.where('business_id', filter.businessId);
    if (filter.keyId !== undefined) query.where('api_key_id', filter.keyId);
    if (filter.since) query.where('created_at', '>=', toDbTime(filter.since));
    return this.replayable(query);
  }

  /** Admin (CLI): how the given deliveries stand, for `replay --wait`. */
  async progress(ids: number[]): Promise<{ id: number; status: DeliveryStatus; attempts: number; under_way: boolean }[]> {
    const rows: WebhookDelivery[] = [];
    for (let i = 0; i < ids.length; i += 500) {
      rows.push(...(await WebhookDelivery.acrossTenants(OWNER, this.db.current).whereIn('id', ids.slice(i, i + 500)).select('id', 'status', 'attempts', 'lease_id')));
    }
    return rows.map((row) => ({ id: row.id, status: row.status, attempts: row.attempts, under_way: row.lease_id !== null }));
  }

  private async attemptsOf(delivery: DeliveryRow): Promise<AttemptView[]> {
    const attempts = await WebhookAttempt.ofDeliveries([delivery], this.db.current).orderBy('id');
    return attempts.map(toAttemptView);
  }

  /**
   * Deliveries that may be sent again: not under way, and of a key that has a webhook URL. A key's
   * URL may have changed or been removed since the event: a replay never goes to an old address.
   */
  private replayable<Q extends ReturnType<typeof WebhookDelivery.of>>(query: Q): Q {
    return query.whereNull('lease_id').whereIn('api_key_id', ApiKey.query(this.db.current).select('id').whereNotNull('webhook_url'));
  }

  /** A fresh retry schedule, addressed to the key's current URL. */
  private replayPatch() {
    return {
      status: 'pending' as const,
      attempts: 0,
      next_attempt_at: this.clock.now().toISOString(),
      lease_id: null,
      url: WebhookDelivery.raw('(select webhook_url from api_keys where api_keys.id = webhook_deliveries.api_key_id)') as unknown as string,
    };
  }

  /** A delivery left as it was because its key has no webhook URL (removed): say so, rather than that it is under way. */
  private async assertKeyHasUrl(delivery: DeliveryView): Promise<void> {
    const key = delivery.api_key_id === null ? undefined : await ApiKey.query(this.db.current).findById(delivery.api_key_id).select('webhook_url');
    if (!key?.webhook_url) {
      throw new InvalidState(`Delivery ${delivery.id} cannot be replayed: its key has no webhook URL (set one, and the replay goes there)`);
    }
  }

  private withEvents<Q extends ReturnType<typeof WebhookDelivery.query>>(query: Q): Q {
    return query
      .join('events', 'events.id', 'webhook_deliveries.event_id')
      .select('webhook_deliveries.*', 'events.type as event_type', 'events.idempotency_key');
  }

  private deliveriesOf(cred: Credential) {
    return WebhookDelivery.of(cred, this.db.current)
      .where(ownDeliveries(cred))
      .join('events', 'events.id', 'webhook_deliveries.event_id')
      .select('webhook_deliveries.*', 'events.type as event_type', 'events.idempotency_key');
  }
}

/** The deliveries a credential may see: a key's to its own URL; a token's to its app's, of its business and mode. */
function ownDeliveries(cred: Credential): Record<string, number> {
  return cred.kind === 'api_key' ? { 'webhook_deliveries.api_key_id': cred.id } : { 'webhook_deliveries.app_id': cred.appId ?? 0 };
}
