/** The query of `GET /events`, and the event type as responses and webhook headers name it. */
import Joi from 'joi';
import { listQuery, ListParams } from '../http/pagination';
import { component, stringEnum } from '../shapes/component';
import { EVENT_TYPES, EventType } from './outbox';
import { MAX_WAITS_PER_CREDENTIAL } from './watch';

/** The longest a `GET /events?wait=` holds the request open, in seconds. */
export const MAX_EVENT_WAIT_SECONDS = 30;

export interface EventListParams extends ListParams {
  type?: EventType;
  wait: number;
}

export const listEventsQuery = listQuery<EventListParams>({
  type: Joi.string()
    .valid(...EVENT_TYPES)
    .description('Only events of this type'),
  wait: Joi.number()
    .integer()
    .min(0)
    .max(MAX_EVENT_WAIT_SECONDS)
    .default(0)
    .description(
      `Long polling: when no event matches yet, hold the request up to this many seconds (at most ${MAX_EVENT_WAIT_SECONDS}) and answer as soon as one is committed; 0 (the default) answers at once, as does a poll of a credential that has ${MAX_WAITS_PER_CREDENTIAL} waiting already`,
    ),
});

export const EventTypeShape = component('EventType', stringEnum(EVENT_TYPES));
