/**
 * The webhook deliveries the outbox writes with each event: one event to one receiver (a key's
 * webhook URL, or an OAuth app's). They are defined here, below the keys and the webhook worker
 * (server/webhooks/), because the outbox and a key's change write them; server/webhooks/model.ts
 * names them with the attempts log.
 */
import { TenantModel } from '../db/tenant-model';

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** One event to one receiver: retried on the schedule until it succeeds or fails for good. */
export class WebhookDelivery extends TenantModel {
  static override tableName = 'webhook_deliveries';
  static override timestampColumns = ['created_at', 'updated_at', 'next_attempt_at', 'delivered_at'];

  event_id!: number;
  /** The receiving key, or null for an app's delivery. */
  api_key_id!: number | null;
  /** The receiving OAuth app, or null for a key's delivery. */
  app_id!: number | null;
  url!: string;
  status!: DeliveryStatus;
  /** Attempts of the current retry schedule: a replay starts it again. */
  attempts!: number;
  /** Never reset: numbers `x-service-delivery` and the attempts in the log, unique for the delivery's life. */
  last_attempt_number!: number;
  next_attempt_at!: string;
  lease_id!: string | null;
  last_status_code!: number | null;
  last_error!: string | null;
  delivered_at!: string | null;
}
