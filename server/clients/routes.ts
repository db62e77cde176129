import { Router } from 'express';
import { Guard } from '../http/guard';
import { credentialOf, recordId, validBody, validQuery } from '../http/request';
import { body, query } from '../http/validate';
import { ClientInput, ClientListParams, createClientBody, listClientsQuery, updateClientBody } from './schema';
import { ClientService } from './service';

export function clientRoutes(svc: ClientService, guard: Guard): Router {
  const r = Router();
  r.get('/clients', ...guard('clients:read'), query(listClientsQuery), async (req, res) => {
    res.json(await svc.list(credentialOf(req), validQuery<ClientListParams>(req)));
  });
  r.get('/clients/:id', ...guard('clients:read'), async (req, res) => {
    res.json({ client: await svc.get(credentialOf(req), recordId(req, 'Client')) });
  });
  r.post('/clients', ...guard('clients:write'), body(createClientBody), async (req, res) => {
    res.status(201).json({ client: await svc.create(credentialOf(req), validBody<ClientInput>(req)) });
  });
  r.patch('/clients/:id', ...guard('clients:write'), body(updateClientBody), async (req, res) => {
    res.json({ client: await svc.update(credentialOf(req), recordId(req, 'Client'), validBody<Partial<ClientInput>>(req)) });
  });
  r.delete('/clients/:id', ...guard('clients:write'), async (req, res) => {
    res.json(await svc.remove(credentialOf(req), recordId(req, 'Client')));
  });
  return r;
}
