import { routeUsing } from '../http/routes';
import { metadataOnlyBody } from '../metadata/schema';
import { ContractEnvelope, ContractList, countersignBody, createContractBody, listContractsQuery } from './schema';
import { ContractService } from './service';

const route = routeUsing<{ contracts: ContractService }>();

export const contractRoutes = [
  route({
    method: 'get',
    path: '/contracts',
    operationId: 'listContracts',
    summary: 'List contracts and proposals',
    tag: 'Contracts',
    scopes: ['contracts:read'],
    query: listContractsQuery,
    response: { status: 200, description: 'A page of contracts', schema: ContractList },
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
    response: { status: 201, description: 'The new contract', schema: ContractEnvelope },
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
    response: { status: 200, description: 'The contract', schema: ContractEnvelope },
    handle: async ({ cred, id }, s) => ({ contract: await s.contracts.get(cred, id) }),
  }),
  route({
    method: 'patch',
    path: '/contracts/{id}',
    operationId: 'updateContract',
    summary: 'Update a contract\'s metadata',
    description: 'Only `metadata` changes once a contract exists (merged; a key set to "" or null is removed): the title, body and amount are what the parties sign.',
    tag: 'Contracts',
    scopes: ['contracts:write'],
    record: 'Contract',
    body: metadataOnlyBody,
    response: { status: 200, description: 'The contract', schema: ContractEnvelope },
    handle: async ({ cred, id, body }, s) => ({ contract: await s.contracts.update(cred, id, body) }),
  }),
  route({
    method: 'post',
    path: '/contracts/{id}/countersign',
    operationId: 'countersignContract',
    summary: 'Countersign a contract for the business',
    description:
      'Records the business\'s signature (name, time, IP address, user agent, SHA-256 of the body). When the client has signed too, the status becomes `signed` and `contract.signed` fires once. A declined contract, or one the business already signed, is a 422 `invalid_state`.',
    tag: 'Contracts',
    scopes: ['contracts:write'],
    record: 'Contract',
    body: countersignBody,
    response: { status: 200, description: 'The contract with its signatures', schema: ContractEnvelope },
    handle: async ({ cred, id, body, requester }, s) => ({
      contract: await s.contracts.countersign(cred, id, { name: body.name, ipAddress: requester.ip, userAgent: requester.userAgent }),
    }),
  }),
];
