/** Webhook deliveries and their attempts as the delivery log (API and CLI) shows them. Pure. */
import { EventType } from '../events/model';
import { WebhookAttempt, WebhookDelivery } from './model';
import { AttemptView, DeliveryView } from './schema';

/** A delivery read with its event's type and idempotency key. */
export type DeliveryRow = WebhookDelivery & { event_type: EventType; idempotency_key: string };

export function toDeliveryView(row: DeliveryRow): DeliveryView {
  return {
    id: row.id,
    event_id: row.event_id,
    event_type: row.event_type,
    idempotency_key: row.idempotency_key,
    api_key_id: row.api_key_id ?? null,
    app_id: row.app_id ?? null,
    url: row.url,
    status: row.status,
    attempts: row.attempts,
    next_attempt_at: row.status === 'pending' ? row.next_attempt_at : null,
    last_status_code: row.last_status_code ?? null,
    last_error: row.last_error ?? null,
    delivered_at: row.delivered_at ?? null,
    livemode: row.livemode,
    created_at: row.created_at,
  };
}

export function toAttemptView(row: WebhookAttempt): AttemptView {
  return {
    attempt: row.attempt,
    started_at: row.started_at,
    duration_ms: row.duration_ms,
    status_code: row.status_code ?? null,
    response_excerpt: row.response_excerpt ?? null,
    error: row.error ?? null,
  };
}
