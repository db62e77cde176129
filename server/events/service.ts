/** The event log a partner reads back (`GET /events`): what a receiver that missed deliveries catches up from. */
import Joi from 'joi';
import { Actor } from '../auth/actor';
import { Clock } from '../clock';
import { Database } from '../db/database';
import { toDbTime } from '../db/time';
import { listQuery, ListParams, Page, paginate } from '../http/pagination';
import { Event, EVENT_TYPES, EventPayload, EventType, toEventPayload } from './outbox';

/** How far back `GET /events` reaches. */
export const EVENT_LOG_DAYS = 30;

export interface EventListParams extends ListParams {
  type?: EventType;
}

export const listEventsQuery = listQuery<EventListParams>({
  type: Joi.string()
    .valid(...EVENT_TYPES)
    .description('Only events of this type'),
});

export class EventService {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
  ) {}

  /** The actor's business and mode's events of the last 30 days, oldest first (pass the last id as `after` to read on). */
  list(actor: Actor, params: EventListParams): Promise<Page<EventPayload>> {
    const since = new Date(this.clock.now().getTime() - EVENT_LOG_DAYS * 86_400_000);
    const query = Event.of(actor, this.db.current).where('events.created_at', '>=', toDbTime(since));
    if (params.type) query.where('events.type', params.type);
    return paginate(query, Event.tableName, params, toEventPayload);
  }
}
