import { routeUsing } from '../http/routes';
import { metadataOnlyBody } from '../metadata/schema';
import { listPaymentsQuery, PaymentEnvelope, PaymentList } from './schema';
import { PaymentService } from './service';

const route = routeUsing<{ payments: PaymentService }>();

export const paymentRoutes = [
  route({
    method: 'get',
    path: '/payments',
    operationId: 'listPayments',
    summary: 'List payments',
    tag: 'Payments',
    scopes: ['payments:read'],
    query: listPaymentsQuery,
    response: { status: 200, description: 'A page of payments', schema: PaymentList },
    handle: ({ cred, query }, s) => s.payments.list(cred, query),
  }),
  route({
    method: 'get',
    path: '/payments/{id}',
    operationId: 'getPayment',
    summary: 'Read a payment',
    tag: 'Payments',
    scopes: ['payments:read'],
    record: 'Payment',
    response: { status: 200, description: 'The payment', schema: PaymentEnvelope },
    handle: async ({ cred, id }, s) => ({ payment: await s.payments.get(cred, id) }),
  }),
  route({
    method: 'patch',
    path: '/payments/{id}',
    operationId: 'updatePayment',
    summary: 'Update a payment\'s metadata',
    description: 'Only `metadata` changes (merged; a key set to "" or null is removed): the money a payment records does not.',
    tag: 'Payments',
    scopes: ['payments:write'],
    record: 'Payment',
    body: metadataOnlyBody,
    response: { status: 200, description: 'The payment', schema: PaymentEnvelope },
    handle: async ({ cred, id, body }, s) => ({ payment: await s.payments.update(cred, id, body) }),
  }),
];
