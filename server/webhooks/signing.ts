/** Webhook signatures: HMAC-SHA256 over the exact bytes sent. */
import { createHmac } from 'node:crypto';

/** `x-service-signature`: lowercase hex HMAC-SHA256 of the raw body, keyed with the webhook secret. */
export function signBody(body: Buffer, secret: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

/**
 * `x-service-signature-v2: t=<unix seconds>,v1=<hex HMAC of "t.body">` (an addition to the spec):
 * the timestamp is signed too, so a receiver can refuse a replayed old delivery.
 */
export function signBodyWithTime(body: Buffer, secret: string, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.`).update(body).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

/**
 * The headers of a delivery of `body` (an event's payload as JSON bytes), signed with `secret`: what
 * the delivery worker sends, and what `invoicing webhooks listen` forwards, so a handler tested
 * against one accepts the other. `deliveryId` names this attempt (`x-service-delivery`).
 */
export function deliveryHeaders(body: Buffer, delivery: { eventType: string; deliveryId: string; secret: string; at: Date }): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'invoicing-webhooks/1',
    'x-service-event': delivery.eventType,
    'x-service-delivery': delivery.deliveryId,
    'x-service-signature': signBody(body, delivery.secret),
    'x-service-signature-v2': signBodyWithTime(body, delivery.secret, Math.floor(delivery.at.getTime() / 1000)),
  };
}
