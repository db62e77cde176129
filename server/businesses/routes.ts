import { Router } from 'express';
import { Guard } from '../http/guard';
import { credentialOf } from '../http/request';
import { BusinessService } from './service';

/** `GET /ping` verifies a key; `GET /business` returns the profile. Neither needs a scope. */
export function businessRoutes(svc: BusinessService, guard: Guard): Router {
  const r = Router();
  r.get('/ping', ...guard(), async (req, res) => {
    const cred = credentialOf(req);
    const { id, name, currency } = await svc.ofCredential(cred);
    res.json({ business: { id, name, currency }, scopes: cred.scopes, livemode: cred.livemode });
  });
  r.get('/business', ...guard(), async (req, res) => {
    res.json({ business: await svc.ofCredential(credentialOf(req)) });
  });
  return r;
}
