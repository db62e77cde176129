/** `POST /gateway/stripe/{business-id}/webhook`: Stripe's signed notifications for one business. */
import express, { Router } from 'express';
import { BadRequest, NotFound } from '../errors';
import { GatewaySignatureInvalid } from './gateway';
import { GatewayService } from './service';

export function gatewayRoutes(gateways: GatewayService): Router {
  const r = Router();
  // The signature covers the raw bytes: the body is kept as it came, whatever its content type says.
  const rawBody = express.raw({ type: () => true, limit: '1mb' });
  r.post('/gateway/stripe/:businessId/webhook', rawBody, async (req, res) => {
    const businessId = String(req.params.businessId);
    if (!/^[1-9][0-9]{0,15}$/.test(businessId)) throw new NotFound('Payment gateway');
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    try {
      await gateways.handleNotification(Number(businessId), body, req.get('stripe-signature'));
    } catch (err) {
      if (err instanceof GatewaySignatureInvalid) throw new BadRequest(err.message);
      throw err;
    }
    res.json({ received: true });
  });
  return r;
}
