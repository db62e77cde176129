/**
 * The event outbox: every change the specification names an event for writes its event row, and
 * one pending delivery per receiving key, in the change's own transaction. A committed change
 * always has its event and deliveries; a rolled-back one never does. The delivery worker is told
 * when such a transaction commits, and finds anything it missed on its next sweep.
 */
import { randomUUID } from 'node:crypto';
import { Knex } from 'knex';
import { Actor } from '../auth/actor';
import { Clock } from '../clock';
import { Database } from '../db/database';
import { TenantModel } from '../db/tenant-model';
import { toDbTime } from '../db/time';
import { ApiKey } from '../keys/model';
import { OAuthApp, OAuthGrant } from '../oauth/model';
import { WebhookDelivery } from '../webhooks/model';

export const EVENT_TYPES = [
  'invoice.created',
  'invoice.sent',
  'invoice.viewed',
  'invoice.paid',
  'payment.received',
  'payment.failed',
  'payment.refunded',
  'contract.signed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export class Event extends TenantModel {
  static override tableName = 'events';

  type!: EventType;
  idempotency_key!: string;
  /** JSON text of the event's `data`. */
  data!: string;
}

/** What a receiver gets: the contract's payload. */
export interface EventPayload {
  id: number;
  type: EventType;
  created_at: string;
  livemode: boolean;
  business_id: number;
  idempotency_key: string;
  data: Record<string, unknown>;
}

export function toEventPayload(row: Event): EventPayload {
  return {
    id: row.id,
    type: row.type,
    created_at: row.created_at,
    livemode: row.livemode,
    business_id: row.business_id,
    idempotency_key: row.idempotency_key,
    data: JSON.parse(row.data) as Record<string, unknown>,
  };
}

export class Outbox {
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
  ) {}

  /** `listener` runs whenever deliveries have become due: a transaction that recorded events committed, or a replay. */
  onDeliveriesDue(listener: () => void): void {
    this.listeners.add(listener);
  }

  /** Tells the listeners once the open transaction commits (at once outside one), never inside it. */
  deliveriesDue(): void {
    this.db.afterCommit(() => this.listeners.forEach((listener) => listener()));
  }

  /** Records an event inside `trx`, the transaction of the change it reports, with its deliveries. */
  async record(trx: Knex.Transaction, actor: Actor, type: EventType, data: Record<string, unknown>): Promise<Event> {
    const event = await Event.of(actor, trx).insert({
      ...Event.ownedBy(actor),
      type,
      idempotency_key: randomUUID(),
      data: JSON.stringify(data),
    });
    // Receivers: every key of the business and mode with a webhook URL. A revoked key receives nothing
    // new, nor does one rotated out with a grace period: its replacement, same URL and secret, does.
    const receivers = await ApiKey.query(trx)
      .where({ business_id: actor.businessId, livemode: actor.livemode })
      .whereNotNull('webhook_url')
      .whereNull('revoked_at')
      .whereNull('expires_at')
      .select('id', 'webhook_url');
    // And every OAuth app with a webhook URL that this business and mode have authorized: one delivery per app.
    const apps = await OAuthApp.query(trx)
      .whereNotNull('webhook_url')
      .whereNull('revoked_at')
      .whereIn('id', OAuthGrant.of(actor, trx).whereNull('revoked_at').select('app_id'))
      .select('id', 'webhook_url');
    const targets = [
      ...receivers.map((key) => ({ api_key_id: key.id, app_id: null, url: key.webhook_url! })),
      ...apps.map((app) => ({ api_key_id: null, app_id: app.id, url: app.webhook_url! })),
    ];
    if (targets.length) {
      const now = toDbTime(this.clock.now());
      await WebhookDelivery.insertAll(
        actor,
        trx,
        targets.map((target) => ({
          event_id: event.id,
          ...target,
          status: 'pending',
          attempts: 0,
          next_attempt_at: now,
          created_at: now,
          updated_at: now,
        })),
      );
      this.deliveriesDue();
    }
    return event;
  }
}
