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
import { Clock } from '../clock';
import { Database } from '../db/database';
import { selectRows } from '../db/statement';
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
 * An event's receivers, in one statement: every key of the business and mode with a webhook URL (a
 * revoked key receives nothing new, nor does one rotated out with a grace period: its replacement,
 * same URL and secret, does), and every OAuth app with a webhook URL that this business and mode
 * have authorized, once per app; each only if its key's or grant's scopes read the event
 * (`readScopeOf`). Scopes are stored as a JSON array, so "holds one of the scopes that grant the
 * read" is one LIKE per such scope on its quoted name. One statement per read scope, built once.
 * The nulls are typed: MariaDB makes the union of an unsigned id and a bare NULL a DECIMAL, which
 * mysql2 returns as text ("2"), and a receiver's id must stay a number (it binds its sealed secret).
 */
function receiversReading(wanted: Scope): { sql: string; patterns: string[] } {
  const patterns = ALL_SCOPES.filter((held) => grants([held], wanted)).map((held) => `%"${held}"%`);
  const holds = `(${patterns.map(() => 'scopes like ?').join(' or ')})`;
  const sql = `
  select id as api_key_id, cast(null as unsigned) as app_id, webhook_url as url, webhook_secret as sealed_secret from api_keys
   where business_id = ? and livemode = ? and webhook_url is not null and revoked_at is null and expires_at is null and ${holds}
  union all
  select cast(null as unsigned), id, webhook_url, webhook_secret_sealed from oauth_apps
   where webhook_url is not null and revoked_at is null
     and id in (select app_id from oauth_grants where business_id = ? and livemode = ? and revoked_at is null and ${holds})`;
  return { sql, patterns };
}

const RECEIVERS = new Map(EVENT_READ_SCOPES.map((scope) => [scope, receiversReading(scope)]));

interface Receiver {
  api_key_id: number | null;
  app_id: number | null;
  url: string;
  sealed_secret: string | null;
}

function receiversOf(trx: Knex.Transaction, actor: Actor, type: EventType): Promise<Receiver[]> {
  const { sql, patterns } = RECEIVERS.get(readScopeOf(type))!;
  const tenancy = [actor.businessId, actor.livemode ? 1 : 0];
  return selectRows<Receiver>(trx, sql, [...tenancy, ...patterns, ...tenancy, ...patterns]);
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
    const event = await Event.create(actor, trx, {
      type,
      idempotency_key: randomUUID(),
      data: JSON.stringify(data),
    });
    // Only while someone waits: the write path pays nothing for a reader that is not there.
    const waiters = this.eventWaiters;
    if (waiters?.waitsFor(actor)) this.db.afterCommit(() => waiters.committed(actor, event.id));
    const targets = (await receiversOf(trx, actor, type)).map(({ api_key_id, app_id, url, sealed_secret }) => ({
      row: { api_key_id, app_id, url },
      sealedSecret: sealed_secret,
    }));
    if (!targets.length) return event;
    const now = this.clock.now();
    const rowOf = (target: (typeof targets)[number]) => ({
      event_id: event.id,
      ...target.row,
      status: 'pending',
      attempts: 0,
      next_attempt_at: toDbTime(now),
      created_at: toDbTime(now),
      updated_at: toDbTime(now),
    });
    const direct = this.direct;
    const leased = direct ? targets.filter((target) => direct.takes(target.row.url)) : [];
    const due = targets.filter((target) => !leased.includes(target));
    await WebhookDelivery.insertAll(actor, trx, due.map(rowOf));
    if (direct && leased.length) {
      // Leased as a claim leases: the first attempt counted, the row due again only after the lease.
      const lease = leasedAtInsert(direct.lease);
      // One INSERT each (one receiver, as a rule): the id comes back with it, so the handover needs no read.
      const handed: DispatchedDelivery[] = [];
      for (const target of leased) {
        handed.push({ delivery: await WebhookDelivery.insertOne(actor, trx, { ...rowOf(target), ...lease }), sealedSecret: target.sealedSecret });
      }
      this.db.afterCommit(() => direct.dispatch(event, handed));
    }
    if (due.length) this.deliveriesDue();
    return event;
  }
}
