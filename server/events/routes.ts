import { READ_SCOPES } from '../auth/scopes';
import { routeUsing } from '../http/routes';
import { EventList, listEventsQuery } from './schema';
import { EventService } from './service';

const route = routeUsing<{ events: EventService }>();

export const eventRoutes = [
  route({
    method: 'get',
    path: '/events',
    operationId: 'listEvents',
    summary: 'The events of the last 30 days',
    description:
      'The business and mode\'s events, oldest first, as their webhook deliveries carry them: a receiver that missed deliveries catches up with `after=<the last event id it saw>`. With `wait`, an empty answer waits for the next event (long polling: how `invoicing webhooks listen` follows the log); at most 5 polls of one credential wait at once, and more are answered at once with what there is. Any read scope; only the event types the credential reads are listed (`invoice.*` and `payment.*` need invoices:read, `contract.*` contracts:read, a :write scope granting its :read), so a credential that reads none gets an empty list, not a 403.',
    tag: 'Webhooks',
    scopes: [...READ_SCOPES],
    query: listEventsQuery,
    response: { status: 200, description: 'A page of events', schema: EventList },
    handle: ({ cred, query, gone }, s) => s.events.listOrWait(cred, query, gone),
  }),
];
