import { Router } from 'express';
import { Guard } from '../http/guard';
import { credentialOf, validQuery } from '../http/request';
import { query } from '../http/validate';
import { listPaymentsQuery, PaymentListParams, PaymentService } from './service';

export function paymentRoutes(svc: PaymentService, guard: Guard): Router {
  const r = Router();
  r.get('/payments', ...guard('payments:read'), query(listPaymentsQuery), async (req, res) => {
    res.json(await svc.list(credentialOf(req), validQuery<PaymentListParams>(req)));
  });
  return r;
}
