import { Router } from 'express';
import { Guard } from '../http/guard';
import { credentialOf, validBody } from '../http/request';
import { body } from '../http/validate';
import { QuickChargeInput, quickChargeBody } from './schema';
import { QuickChargeService } from './service';

export function quickChargeRoutes(svc: QuickChargeService, guard: Guard): Router {
  const r = Router();
  r.post('/quick-charge', ...guard('invoices:write'), body(quickChargeBody), async (req, res) => {
    res.status(201).json(await svc.charge(credentialOf(req), validBody<QuickChargeInput>(req)));
  });
  return r;
}
