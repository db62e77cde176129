/** The query of `GET /webhook-deliveries`, and the delivery log as the API (and the CLI) show it. */
import { Static, Type } from '@sinclair/typebox';
import Joi from 'joi';
import { EVENT_TYPES, EventType } from '../events/model';
import { EventTypeShape } from '../events/schema';
import { listQuery, ListParams } from '../http/pagination';
import { closed, dateTime, envelope, Id, listOf } from '../shapes/common';
import { component, nullable, stringEnum } from '../shapes/component';
import { DELIVERY_STATUSES, DeliveryStatus } from './model';

export interface DeliveryListParams extends ListParams {
  status?: DeliveryStatus;
  event?: EventType;
}

export const listDeliveriesQuery = listQuery<DeliveryListParams>({
  status: Joi.string()
    .valid(...DELIVERY_STATUSES)
    .description('Only deliveries in this status'),
  event: Joi.string()
    .valid(...EVENT_TYPES)
    .description('Only deliveries of this event type'),
});

export const WebhookDeliveryShape = component(
  'WebhookDelivery',
  closed({
    id: Id,
    event_id: Id,
    event_type: EventTypeShape,
    idempotency_key: Type.String({ format: 'uuid', description: 'The event\'s: the same on every attempt and replay' }),
    api_key_id: nullable(Type.Integer({ minimum: 1 }), { description: 'The receiving key; null for an OAuth app\'s delivery' }),
    app_id: nullable(Type.Integer({ minimum: 1 }), { description: 'The receiving OAuth app; null for a key\'s delivery' }),
    url: Type.String({ description: 'The receiver\'s webhook URL when the event happened' }),
    status: component('DeliveryStatus', stringEnum(DELIVERY_STATUSES)),
    attempts: Type.Integer({ minimum: 0 }),
    next_attempt_at: nullable(dateTime, { description: 'When a pending delivery is next tried' }),
    last_status_code: nullable(Type.Integer()),
    last_error: nullable(Type.String()),
    delivered_at: nullable(dateTime),
    livemode: Type.Boolean(),
    created_at: dateTime,
  }),
);
export type DeliveryView = Static<typeof WebhookDeliveryShape>;

export const WebhookAttemptShape = component(
  'WebhookAttempt',
  closed({
    attempt: Type.Integer({ minimum: 1 }),
    started_at: dateTime,
    duration_ms: Type.Integer({ minimum: 0 }),
    status_code: nullable(Type.Integer()),
    response_excerpt: nullable(Type.String(), { description: 'The start of the response body, at most 2 KB' }),
    error: nullable(Type.String()),
  }),
);
export type AttemptView = Static<typeof WebhookAttemptShape>;

export const WebhookDeliveryDetail = component('WebhookDeliveryDetail', closed({ delivery: WebhookDeliveryShape, attempts: Type.Array(WebhookAttemptShape) }));
export const WebhookDeliveryList = listOf('WebhookDeliveryList', WebhookDeliveryShape);
export const WebhookDeliveryEnvelope = envelope('WebhookDeliveryEnvelope', 'delivery', WebhookDeliveryShape);
