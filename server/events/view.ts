/** An event as `GET /events` and its webhook deliveries carry it. Pure. */
import { Event } from './model';
import { EventPayload } from './schema';

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
