/**
 * The event outbox: every change the specification names an event for writes its event row, and
 * one pending delivery per receiving key, in the change's own transaction. A committed change
 * always has its event and deliveries; a rolled-back one never does.
 *
 * When this process's delivery worker has room, the deliveries are written already leased to it and
 * handed over once the transaction commits, so the first attempt goes out with no claim in between;
 * if the process dies first, the lease runs out and any process's sweep sends them. Otherwise they
 * are written due now, and the worker is told when the transaction commits (a sweep finds anything
 * it missed).
 */
import { randomUUID } from 'node:crypto';
import { Knex } from 'knex';
import { Actor } from '../auth/actor';
import { Tenancy } from '../auth/credential';
import { ALL_SCOPES, grants, Scope } from '../auth/scopes';
import { businessClock, Clock } from '../clock';
import { Database } from '../db/database';
import { selectRows, StoredRow } from '../db/statement';
import { toDbTime } from '../db/time';
import { leasedAtInsert, LeaseOptions } from '../jobs/lease';
import { WebhookDelivery } from './deliveries';
import { Event, EVENT_TYPES, EventType } from './model';

/** The resource an event type is named for: the part before its dot. */
type EventResource = EventType extends `${infer Resource}.${string}` ? Resource : never;

/**
 * The read scope an event's receiver must hold (directly, or as its :write scope): that of what the
 * event carries. Payment events carry their invoice (whose read includes its payments), so they
 * need invoices:read, not payments:read. A new kind of event does not compile until it has a rule.
 */
const READ_SCOPE_OF: Record<EventResource, Scope> = {
  invoice: 'invoices:read',
  payment: 'invoices:read',
  contract: 'contracts:read',
  credit_note: 'invoices:read',
};

export function readScopeOf(type: EventType): Scope {
  return READ_SCOPE_OF[type.slice(0, type.indexOf('.')) as EventResource];
}

/** The event types a credential holding `scopes` receives and lists. */
export function readableEventTypes(scopes: readonly Scope[]): EventType[] {
  return EVENT_TYPES.filter((type) => grants(scopes, readScopeOf(type)));
}

/** The scopes that read every event type: what `webhooks listen`'s own key holds. */
export const EVENT_READ_SCOPES: readonly Scope[] = [...new Set(EVENT_TYPES.map(readScopeOf))];

/** A new delivery with its receiver's sealed signing secret, as read in the transaction that created it. */
export interface DispatchedDelivery {
  delivery: WebhookDelivery;
  sealedSecret: string | null;
}

/** The server's delivery worker, as the outbox sees it: deliveries it takes go to it straight from their commit. */
export interface DirectDispatch {
  /** How the worker leases what it takes: a delivery handed to it is written with that lease. */
  readonly lease: Pick<LeaseOptions, 'leaseSeconds' | 'clock' | 'counters'>;
  /** Whether the worker takes a new delivery to `url` now, or leaves it to be claimed when due. */
  takes(url: string): boolean;
  /** After the commit: the deliveries leased to this process and their event. */
  dispatch(event: Event, deliveries: DispatchedDelivery[]): void;
}

/** Readers of the event log waiting for new events of a business and mode. */
export interface EventWaiters {
  waitsFor(tenancy: Tenancy): boolean;
  /** After the commit of an event of the business and mode. */
  committed(tenancy: Tenancy, eventId: number): void;
}

/**
 * The receivers of events of several businesses of one mode, in one statement: for each business,
 * every key of the business and mode with a webhook URL (a revoked key receives nothing new, nor does
 * one rotated out with a grace period: its replacement, same URL and secret, does), and every OAuth
 * app with a webhook URL that the business and mode have authorized, once per app; each only if its
 * key's or grant's scopes read the event (`readScopeOf`). Scopes are stored as a JSON array, so
 * "holds one of the scopes that grant the read" is one LIKE per such scope on its quoted name. The
 * text depends on the scope and the number of businesses (one, as a rule), so each is prepared once.
 * The nulls are typed: MariaDB makes the union of an unsigned id and a bare NULL a DECIMAL, which
 * mysql2 returns as text ("2"), and a receiver's id must stay a number (it binds its sealed secret).
 */
function receiversReading(wanted: Scope, businesses: number): { sql: string; patterns: string[] } {
  const patterns = ALL_SCOPES.filter((held) => grants([held], wanted)).map((held) => `%"${held}"%`);
  const holds = (column: string) => `(${patterns.map(() => `${column} like ?`).join(' or ')})`;
  const among = `in (${Array.from({ length: businesses }, () => '?').join(', ')})`;
  const sql = `
  select business_id, id as api_key_id, cast(null as unsigned) as app_id, webhook_url as url, webhook_secret as sealed_secret from api_keys
   where business_id ${among} and livemode = ? and webhook_url is not null and revoked_at is null and expires_at is null and ${holds('scopes')}
  union all
  select distinct oauth_grants.business_id, cast(null as unsigned), oauth_apps.id, oauth_apps.webhook_url, oauth_apps.webhook_secret_sealed from oauth_apps
    join oauth_grants on oauth_grants.app_id = oauth_apps.id
   where oauth_apps.webhook_url is not null and oauth_apps.revoked_at is null
     and oauth_grants.business_id ${among} and oauth_grants.livemode = ? and oauth_grants.revoked_at is null and ${holds('oauth_grants.scopes')}`;
  return { sql, patterns };
}

interface Receiver {
  business_id: number;
  api_key_id: number | null;
  app_id: number | null;
  url: string;
  sealed_secret: string | null;
}

/** The receivers of events of `type` of these businesses in one mode, by business id. */
async function receiversOf(trx: Knex.Transaction, businessIds: readonly number[], livemode: boolean, type: EventType): Promise<Map<number, Receiver[]>> {
  const { sql, patterns } = receiversReading(readScopeOf(type), businessIds.length);
  const tenancy = [...businessIds, livemode ? 1 : 0];
  const byBusiness = new Map<number, Receiver[]>();
  for (const receiver of await selectRows<Receiver>(trx, sql, [...tenancy, ...patterns, ...tenancy, ...patterns])) {
    byBusiness.set(receiver.business_id, [...(byBusiness.get(receiver.business_id) ?? []), receiver]);
  }
  return byBusiness;
}

/** One event to record: whose, what, and (for work done late, dated when it was due) when; by default the business clock's now. */
export interface NewEvent {
  actor: Actor;
  type: EventType;
  data: Record<string, unknown>;
  at?: Date;
}

export class Outbox {
  private readonly listeners = new Set<() => void>();
  private eventWaiters?: EventWaiters;
  private direct?: DirectDispatch;

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
  ) {}

  /** `listener` runs whenever deliveries have become due: a transaction that recorded events committed, or a replay. */
  onDeliveriesDue(listener: () => void): void {
    this.listeners.add(listener);
  }

  /** Deliveries the worker takes are written leased to it and handed over after their commit. */
  dispatchTo(worker: DirectDispatch): void {
    this.direct = worker;
  }

  /** The readers of the event log waiting for new events (`GET /events?wait=`) are told when an event of theirs commits. */
  wakeAtCommit(waiters: EventWaiters): void {
    this.eventWaiters = waiters;
  }

  /** Tells the listeners once the open transaction commits (at once outside one), never inside it. */
  deliveriesDue(): void {
    this.db.afterCommit(() => this.listeners.forEach((listener) => listener()));
  }

  /** Records an event inside `trx`, the transaction of the change it reports, with its deliveries. */
  async record(trx: Knex.Transaction, actor: Actor, type: EventType, data: Record<string, unknown>): Promise<Event> {
    const [event] = await this.recordMany(trx, [{ actor, type, data }]);
    return event;
  }

  /**
   * Records several events inside `trx`, in the order given (their ids follow it), with their
   * deliveries: one INSERT of the events, one read of the receivers per mode and kind of event, one
   * INSERT of the deliveries. What a sweep that works many invoices in a transaction records.
   */
  async recordMany(trx: Knex.Transaction, entries: readonly NewEvent[]): Promise<Event[]> {
    if (!entries.length) return [];
    const events = await this.insertEvents(trx, entries);
    // Only while someone waits: the write path pays nothing for a reader that is not there.
    const waiters = this.eventWaiters;
    events.forEach((event, i) => {
      const { actor } = entries[i];
      if (waiters?.waitsFor(actor)) this.db.afterCommit(() => waiters.committed(actor, event.id));
    });
    const receivers = await this.receiversOfAll(trx, entries);
    const now = toDbTime(this.clock.now());
    const direct = this.direct;
    const due: { owner: Actor; row: StoredRow }[] = [];
    const leased: { event: Event; owner: Actor; row: StoredRow; sealedSecret: string | null }[] = [];
    events.forEach((event, i) => {
      const { actor, type } = entries[i];
      for (const receiver of receivers(actor, type)) {
        const row: StoredRow = {
          event_id: event.id,
          api_key_id: receiver.api_key_id,
          app_id: receiver.app_id,
          url: receiver.url,
          status: 'pending',
          attempts: 0,
          next_attempt_at: now,
          created_at: now,
          updated_at: now,
        };
        if (direct?.takes(receiver.url)) leased.push({ event, owner: actor, row, sealedSecret: receiver.sealed_secret });
        else due.push({ owner: actor, row });
      }
    });
    await WebhookDelivery.insertOwned(trx, due);
    if (direct && leased.length) await this.handOver(trx, direct, leased);
    if (due.length) this.deliveriesDue();
    return events;
  }

  /** The events' rows, in one INSERT, dated by the business clock unless an entry names its moment. */
  private async insertEvents(trx: Knex.Transaction, entries: readonly NewEvent[]): Promise<Event[]> {
    const rows = entries.map(({ actor, type, data, at }) => {
      const created = toDbTime(at ?? businessClock.now());
      return { owner: actor, row: { type, idempotency_key: randomUUID(), data: JSON.stringify(data), created_at: created, updated_at: created } };
    });
    let ids = await Event.insertOwned(trx, rows);
    if (!ids) {
      // Not numbered in order (InnoDB's interleaved mode): each row's id, read back by its unique key.
      const keys = rows.map(({ row }) => row.idempotency_key as string);
      const read = await selectRows<{ id: number; idempotency_key: string }>(trx, `select id, idempotency_key from events where idempotency_key in (${keys.map(() => '?').join(', ')})`, keys);
      const idOf = new Map(read.map((row) => [row.idempotency_key, row.id]));
      ids = keys.map((key) => idOf.get(key)!);
    }
    const stored = ids;
    return rows.map(({ owner, row }, i) => Event.fromDatabaseJson<Event>({ ...row, business_id: owner.businessId, livemode: owner.livemode ? 1 : 0, id: stored[i] }));
  }

  /** Reads the receivers of the entries' events: one statement per mode and read scope; then by actor and type. */
  private async receiversOfAll(trx: Knex.Transaction, entries: readonly NewEvent[]): Promise<(actor: Actor, type: EventType) => Receiver[]> {
    const found = new Map<string, Map<number, Receiver[]>>();
    const groupOf = (livemode: boolean, type: EventType) => `${livemode ? 'live' : 'test'} ${readScopeOf(type)}`;
    const groups = new Map<string, { livemode: boolean; type: EventType; businesses: Set<number> }>();
    for (const { actor, type } of entries) {
      const key = groupOf(actor.livemode, type);
      const group = groups.get(key) ?? { livemode: actor.livemode, type, businesses: new Set<number>() };
      group.businesses.add(actor.businessId);
      groups.set(key, group);
    }
    for (const [key, group] of groups) found.set(key, await receiversOf(trx, [...group.businesses], group.livemode, group.type));
    return (actor, type) => found.get(groupOf(actor.livemode, type))?.get(actor.businessId) ?? [];
  }

  /**
   * Deliveries the direct worker takes: written leased to it (as a claim leases: the first attempt
   * counted, the row due again only after the lease) and handed over after the commit, with their
   * ids, so the handover needs no read.
   */
  private async handOver(trx: Knex.Transaction, direct: DirectDispatch, leased: { event: Event; owner: Actor; row: StoredRow; sealedSecret: string | null }[]): Promise<void> {
    const lease = leasedAtInsert(direct.lease);
    const rows = leased.map(({ owner, row }) => ({ owner, row: { ...row, ...lease } }));
    const ids = (await WebhookDelivery.insertOwned(trx, rows)) ?? (await this.idsOfLeased(trx, String(lease.lease_id), rows));
    const byEvent = new Map<Event, DispatchedDelivery[]>();
    leased.forEach(({ event, owner, sealedSecret }, i) => {
      const delivery = WebhookDelivery.fromDatabaseJson<WebhookDelivery>({ ...rows[i].row, business_id: owner.businessId, livemode: owner.livemode ? 1 : 0, id: ids[i] });
      byEvent.set(event, [...(byEvent.get(event) ?? []), { delivery, sealedSecret }]);
    });
    this.db.afterCommit(() => byEvent.forEach((handed, event) => direct.dispatch(event, handed)));
  }

  /**
   * The ids of deliveries just written under one lease, where the database did not number them in
   * order: read back by the lease, each row known by its event and receiver (one delivery of an
   * event per receiver).
   */
  private async idsOfLeased(trx: Knex.Transaction, leaseId: string, rows: readonly { row: StoredRow }[]): Promise<number[]> {
    const keyOf = (row: Record<string, unknown>) => `${Number(row.event_id)} ${Number(row.api_key_id)} ${Number(row.app_id)}`;
    const read = await selectRows<{ id: number; event_id: number; api_key_id: number | null; app_id: number | null }>(
      trx,
      'select id, event_id, api_key_id, app_id from webhook_deliveries where lease_id = ?',
      [leaseId],
    );
    const idOf = new Map(read.map((row) => [keyOf(row), row.id]));
    return rows.map(({ row }) => idOf.get(keyOf(row))!);
  }
}
