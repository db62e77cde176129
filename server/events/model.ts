/** The event log's table: one row per event, written by the outbox in the change's own transaction. */
import { TenantModel } from '../db/tenant-model';

export const EVENT_TYPES = [
  'invoice.created',
  'invoice.sent',
  'invoice.viewed',
  'invoice.paid',
  'invoice.overdue',
  'invoice.reminder_sent',
  'payment.received',
  'payment.failed',
  'payment.refunded',
  'payment.refund_failed',
  'contract.signed',
  'credit_note.created',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * An event is dated by its business's clock, as the change it reports (contract: "each record and
 * event carries the moment it was due"): a frozen test mode's events carry its time, and work done
 * late (a sweep after downtime, a test clock's advance) records its events at the moment they were
 * due. Their deliveries keep the real time (server/events/outbox.ts), so a frozen clock never stalls
 * a webhook; the 30-day log counts on both clocks (server/events/service.ts).
 */
export class Event extends TenantModel {
  static override tableName = 'events';

  type!: EventType;
  idempotency_key!: string;
  /** JSON text of the event's `data`. */
  data!: string;
}
