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

export function createReceiver(options: { secret: string; logger: Logger; onOrder: (orderId: number) => void }): Express {
  const app = express();
  app.disable('x-powered-by');
  app.post('/woocommerce/webhook', express.raw({ type: () => true, limit: '5mb' }), (req, res) => {
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    // The ping WooCommerce sends when the webhook is created is form-encoded `webhook_id=N`, unsigned.
    if (!req.get('x-wc-webhook-signature') && /^webhook_id=\d+$/.test(body.toString('utf8').trim())) {
      res.status(200).json({ received: true });
      return;
    }
    if (!validSignature(body, req.get('x-wc-webhook-signature'), options.secret)) {
      options.logger.warn({ delivery: req.get('x-wc-webhook-delivery-id') }, 'webhook delivery with a bad signature refused');
      res.status(401).json({ error: 'bad_signature' });
      return;
    }
    let payload: { id?: unknown; arg?: unknown; status?: unknown };
    try {
      payload = JSON.parse(body.toString('utf8')) as typeof payload;
    } catch {
      res.status(400).json({ error: 'bad_request' });
      return;
    }
    const topic = req.get('x-wc-webhook-topic') ?? '';
    const orderId = orderIdOf(topic, payload);
    res.status(202).json({ received: true });
    // Orders still in progress (pending, processing, on-hold) need nothing; the rest is checked against the store.
    const relevant = topic !== 'order.updated' || WATCHED_STATUSES.includes(String(payload.status));
    if (orderId !== null && relevant) setImmediate(() => options.onOrder(orderId));
  });
  app.get('/woocommerce/health', (_req, res) => {
    res.json({ status: 'ok' });
  });
  return app;
}
