import { routeUsing } from '../http/routes';
import { listDeliveriesQuery, WebhookDeliveryDetail, WebhookDeliveryEnvelope, WebhookDeliveryList } from './schema';
import { WebhookService } from './service';

const route = routeUsing<{ webhooks: WebhookService }>();

/** A key reads and replays the deliveries to its own webhook URL: no scope beyond holding the key. */
export const webhookRoutes = [
  route({
    method: 'get',
    path: '/webhook-deliveries',
    operationId: 'listWebhookDeliveries',
    summary: 'The delivery log of the calling key\'s webhook URL',
    tag: 'Webhooks',
    scopes: [],
    query: listDeliveriesQuery,
    response: { status: 200, description: 'A page of deliveries', schema: WebhookDeliveryList },
    handle: ({ cred, query }, s) => s.webhooks.list(cred, query),
  }),
  route({
    method: 'get',
    path: '/webhook-deliveries/{id}',
    operationId: 'getWebhookDelivery',
    summary: 'One delivery with every attempt',
    tag: 'Webhooks',
    scopes: [],
    record: 'Webhook delivery',
    response: { status: 200, description: 'The delivery and its attempts', schema: WebhookDeliveryDetail },
    handle: ({ cred, id }, s) => s.webhooks.get(cred, id),
  }),
  route({
    method: 'post',
    path: '/webhook-deliveries/{id}/replay',
    operationId: 'replayWebhookDelivery',
    summary: 'Send a delivery again',
    description:
      'With a fresh retry schedule, to the key\'s current webhook URL; the payload and its `idempotency_key` are the event\'s own. A 403 when the credential no longer holds the scope the event needs (its scopes were narrowed since).',
    tag: 'Webhooks',
    scopes: [],
    record: 'Webhook delivery',
    errors: { '403': 'Forbidden' },
    response: { status: 200, description: 'The delivery, pending again', schema: WebhookDeliveryEnvelope },
    handle: async ({ cred, id }, s) => ({ delivery: await s.webhooks.replay(cred, id) }),
  }),
];
