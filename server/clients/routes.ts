import { routeUsing } from '../http/routes';
import { Deleted } from '../shapes/common';
import { ClientEnvelope, ClientList, createClientBody, listClientsQuery, updateClientBody } from './schema';
import { ClientService } from './service';

const route = routeUsing<{ clients: ClientService }>();

export const clientRoutes = [
  route({
    method: 'get',
    path: '/clients',
    operationId: 'listClients',
    summary: 'List clients',
    tag: 'Clients',
    scopes: ['clients:read'],
    query: listClientsQuery,
    response: { status: 200, description: 'A page of clients', schema: ClientList },
    handle: ({ cred, query }, s) => s.clients.list(cred, query),
  }),
  route({
    method: 'post',
    path: '/clients',
    operationId: 'createClient',
    summary: 'Create a client',
    description: 'A duplicate e-mail (ignoring case) within the business and mode is a 422 with `errors.email`.',
    tag: 'Clients',
    scopes: ['clients:write'],
    body: createClientBody,
    response: { status: 201, description: 'The new client', schema: ClientEnvelope },
    handle: async ({ cred, body }, s) => ({ client: await s.clients.create(cred, body) }),
  }),
  route({
    method: 'get',
    path: '/clients/{id}',
    operationId: 'getClient',
    summary: 'Read a client',
    tag: 'Clients',
    scopes: ['clients:read'],
    record: 'Client',
    response: { status: 200, description: 'The client', schema: ClientEnvelope },
    handle: async ({ cred, id }, s) => ({ client: await s.clients.get(cred, id) }),
  }),
  route({
    method: 'patch',
    path: '/clients/{id}',
    operationId: 'updateClient',
    summary: 'Update a client',
    tag: 'Clients',
    scopes: ['clients:write'],
    record: 'Client',
    body: updateClientBody,
    response: { status: 200, description: 'The updated client', schema: ClientEnvelope },
    handle: async ({ cred, id, body }, s) => ({ client: await s.clients.update(cred, id, body) }),
  }),
  route({
    method: 'delete',
    path: '/clients/{id}',
    operationId: 'deleteClient',
    summary: 'Delete a client',
    description: 'A client that has invoices cannot be deleted (422 `invalid_state`).',
    tag: 'Clients',
    scopes: ['clients:write'],
    record: 'Client',
    response: { status: 200, description: 'Deleted', schema: Deleted },
    errors: { '422': 'Unprocessable' },
    handle: ({ cred, id }, s) => s.clients.remove(cred, id),
  }),
];
