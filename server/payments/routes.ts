import { route } from '../http/routes';
import { listPaymentsQuery } from './service';

export const paymentRoutes = [
  route({
    method: 'get',
    path: '/payments',
    operationId: 'listPayments',
    summary: 'List payments',
    tag: 'Payments',
    scopes: ['payments:read'],
    query: listPaymentsQuery,
    response: { status: 200, description: 'A page of payments', schema: 'PaymentList' },
    handle: ({ cred, query }, s) => s.payments.list(cred, query),
  }),
];
