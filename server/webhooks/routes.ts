import { Router } from 'express';
import Joi from 'joi';
import { Guard } from '../http/guard';
import { credentialOf, recordId, validQuery } from '../http/request';
import { body, query } from '../http/validate';
import { DeliveryListParams, listDeliveriesQuery, WebhookService } from './service';

/** A key reads and replays the deliveries to its own webhook URL: no scope beyond holding the key. */
export function webhookRoutes(svc: WebhookService, guard: Guard): Router {
  const r = Router();
  r.get('/webhook-deliveries', ...guard(), query(listDeliveriesQuery), async (req, res) => {
    res.json(await svc.list(credentialOf(req), validQuery<DeliveryListParams>(req)));
  });
  r.get('/webhook-deliveries/:id', ...guard(), async (req, res) => {
    res.json(await svc.get(credentialOf(req), recordId(req, 'Webhook delivery')));
  });
  r.post('/webhook-deliveries/:id/replay', ...guard(), body(Joi.object({})), async (req, res) => {
    res.json({ delivery: await svc.replay(credentialOf(req), recordId(req, 'Webhook delivery')) });
  });
  return r;
}
