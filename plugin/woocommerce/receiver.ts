/**
 * `POST /woocommerce/webhook`: WooCommerce deliveries, verified with WooCommerce's recipe (base64
 * HMAC-SHA256 of the raw body under the webhook secret, in X-WC-Webhook-Signature), answered at once;
 * the order is processed after the answer, so a slow partner API never makes WooCommerce time out.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import express, { Express } from 'express';
import { Logger } from 'pino';
import { WATCHED_STATUSES } from './order';

export function signatureOf(body: Buffer, secret: string): string {
  return createHmac('sha256', secret).update(body).digest('base64');
}

function validSignature(body: Buffer, header: string | undefined, secret: string): boolean {
  if (!header) return false;
  const expected = Buffer.from(signatureOf(body, secret));
  const given = Buffer.from(header.trim());
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The order a delivery is about: `order.updated` carries the order, the completed action only its id. */
function orderIdOf(topic: string, payload: { id?: unknown; arg?: unknown }): number | null {
  const value = topic.startsWith('action.') ? payload.arg : payload.id;
  const id = Number(value);
  return Number.isSafeInteger(id) && id > 0 ? id : null;
}

/** What a delivery to `POST …/webhook` comes to, decided from its raw body and headers alone. */
export type Delivery =
  | { kind: 'ping' }
  | { kind: 'bad_signature' }
  | { kind: 'bad_request' }
  /** `orderId` null: a delivery about nothing the bridge follows (an order still in progress, no id). */
  | { kind: 'order'; orderId: number | null };

/** Reads a WooCommerce delivery: the unsigned ping, a bad signature, or the order it is about. */
export function readDelivery(body: Buffer, header: (name: string) => string | undefined, secret: string): Delivery {
  // The ping WooCommerce sends when the webhook is created is form-encoded `webhook_id=N`, unsigned.
  if (!header('x-wc-webhook-signature') && /^webhook_id=\d+$/.test(body.toString('utf8').trim())) return { kind: 'ping' };
  if (!validSignature(body, header('x-wc-webhook-signature'), secret)) return { kind: 'bad_signature' };
  let payload: { id?: unknown; arg?: unknown; status?: unknown };
  try {
    payload = JSON.parse(body.toString('utf8')) as typeof payload;
  } catch {
    return { kind: 'bad_request' };
  }
  const topic = header('x-wc-webhook-topic') ?? '';
  // Orders still in progress (pending, processing, on-hold) need nothing; the rest is checked against the store.
  const relevant = topic !== 'order.updated' || WATCHED_STATUSES.includes(String(payload.status));
  return { kind: 'order', orderId: relevant ? orderIdOf(topic, payload) : null };
}

export function createReceiver(options: { secret: string; logger: Logger; onOrder: (orderId: number) => void }): Express {
  const app = express();
  app.disable('x-powered-by');
  app.post('/woocommerce/webhook', express.raw({ type: () => true, limit: '5mb' }), (req, res) => {
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const delivery = readDelivery(body, (name) => req.get(name), options.secret);
    switch (delivery.kind) {
      case 'ping':
        res.status(200).json({ received: true });
        return;
      case 'bad_signature':
        options.logger.warn({ delivery: req.get('x-wc-webhook-delivery-id') }, 'webhook delivery with a bad signature refused');
        res.status(401).json({ error: 'bad_signature' });
        return;
      case 'bad_request':
        res.status(400).json({ error: 'bad_request' });
        return;
      case 'order': {
        res.status(202).json({ received: true });
        const { orderId } = delivery;
        if (orderId !== null) setImmediate(() => options.onOrder(orderId));
      }
    }
  });
  app.get('/woocommerce/health', (_req, res) => {
    res.json({ status: 'ok' });
  });
  return app;
}
