/**
 * The event outbox: every change the specification names an event for writes its event row in
 * the change's own transaction, so a committed change always has its event and a rolled-back one
 * never does. Delivery reads these rows later.
 */
import { randomUUID } from 'node:crypto';
import { Knex } from 'knex';
import { Tenancy } from '../auth/credential';
import { TenantModel } from '../db/base-model';

export const EVENT_TYPES = [
  'invoice.created',
  'invoice.sent',
  'invoice.viewed',
  'invoice.paid',
  'payment.received',
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

/** Records an event inside `trx`, the transaction of the change it reports. */
export async function recordEvent(trx: Knex.Transaction, cred: Tenancy, type: EventType, data: Record<string, unknown>): Promise<Event> {
  return Event.query(trx).insert({
    ...Event.ownedBy(cred),
    type,
    idempotency_key: randomUUID(),
    data: JSON.stringify(data),
  });
}
