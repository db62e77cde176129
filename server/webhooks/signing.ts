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
