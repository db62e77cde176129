import { Knex } from 'knex';
import { ChildModel } from '../db/tenant-model';
import { WebhookDelivery } from '../events/deliveries';

/** The delivery row is the outbox's (server/events/deliveries.ts); the webhooks resource reads it from here. */
export { DELIVERY_STATUSES, WebhookDelivery } from '../events/deliveries';
export type { DeliveryStatus } from '../events/deliveries';

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
