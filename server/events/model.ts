/** The event log's table: one row per event, written by the outbox in the change's own transaction. */
import { Clock, systemClock } from '../clock';
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

export class Event extends TenantModel {
  static override tableName = 'events';
  /**
   * The real time, as the deliveries the outbox writes with each event: the 30-day log, `GET /events`
   * and the webhook schedules are kept by it, which a business's frozen test-mode clock must not stall.
   */
  static override rowClock: Clock = systemClock;

  type!: EventType;
  idempotency_key!: string;
  /** JSON text of the event's `data`. */
  data!: string;
}
