import { Router } from 'express';
import { Guard } from '../http/guard';
import { credentialOf, recordId, validBody, validQuery } from '../http/request';
import { body, query } from '../http/validate';
import { ContractInput, ContractListParams, createContractBody, listContractsQuery } from './schema';
import { ContractService } from './service';

export function contractRoutes(svc: ContractService, guard: Guard): Router {
  const r = Router();
  r.get('/contracts', ...guard('contracts:read'), query(listContractsQuery), async (req, res) => {
    res.json(await svc.list(credentialOf(req), validQuery<ContractListParams>(req)));
  });
  r.get('/contracts/:id', ...guard('contracts:read'), async (req, res) => {
    res.json({ contract: await svc.get(credentialOf(req), recordId(req, 'Contract')) });
  });
  r.post('/contracts', ...guard('contracts:write'), body(createContractBody), async (req, res) => {
    res.status(201).json({ contract: await svc.create(credentialOf(req), validBody<ContractInput>(req)) });
  });
  return r;
}
