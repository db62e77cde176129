import { Knex } from 'knex';
import { ChildModel, TenantModel } from '../db/tenant-model';

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** One event to one receiver (a key's webhook URL, or an OAuth app's): retried on the schedule until it succeeds or fails for good. */
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

/** Every attempt, kept for the delivery log. */
export class WebhookAttempt extends ChildModel {
  static override tableName = 'webhook_attempts';
  static override timestampColumns = ['created_at', 'updated_at', 'started_at'];
  static override parentColumn = 'delivery_id';

  static ofDeliveries(deliveries: readonly WebhookDelivery[], conn: Knex) {
    return WebhookAttempt.ofParents(deliveries, conn);
  }

  delivery_id!: number;
  attempt!: number;
  started_at!: string;
  duration_ms!: number;
  status_code!: number | null;
  response_excerpt!: string | null;
  error!: string | null;
}
