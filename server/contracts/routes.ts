import { route } from '../http/routes';
import { createContractBody, listContractsQuery } from './schema';

export const contractRoutes = [
  route({
    method: 'get',
    path: '/contracts',
    operationId: 'listContracts',
    summary: 'List contracts and proposals',
    tag: 'Contracts',
    scopes: ['contracts:read'],
    query: listContractsQuery,
    response: { status: 200, description: 'A page of contracts', schema: 'ContractList' },
    handle: ({ cred, query }, s) => s.contracts.list(cred, query),
  }),
  route({
    method: 'post',
    path: '/contracts',
    operationId: 'createContract',
    summary: 'Create a contract or proposal',
    description: 'The response carries `signing_url` and `embed_url` for the client. When both parties have signed, `contract.signed` fires.',
    tag: 'Contracts',
    scopes: ['contracts:write'],
    body: createContractBody,
    response: { status: 201, description: 'The new contract', schema: 'ContractEnvelope' },
    handle: async ({ cred, body }, s) => ({ contract: await s.contracts.create(cred, body) }),
  }),
  route({
    method: 'get',
    path: '/contracts/{id}',
    operationId: 'getContract',
    summary: 'Read a contract or proposal',
    tag: 'Contracts',
    scopes: ['contracts:read'],
    record: 'Contract',
    response: { status: 200, description: 'The contract', schema: 'ContractEnvelope' },
    handle: async ({ cred, id }, s) => ({ contract: await s.contracts.get(cred, id) }),
  }),
];
