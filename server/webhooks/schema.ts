/** The query of `GET /webhook-deliveries`. */
import Joi from 'joi';
import { EVENT_TYPES, EventType } from '../events/outbox';
import { listQuery, ListParams } from '../http/pagination';
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
