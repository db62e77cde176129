import { routeUsing } from '../http/routes';
import { listRefundsQuery, RefundEnvelope, refundBody, RefundList, RefundResultShape } from './schema';
import { RefundService } from './service';

const route = routeUsing<{ refunds: RefundService }>();

export const refundRoutes = [
  route({
    method: 'post',
    path: '/payments/{id}/refund',
    operationId: 'refundPayment',
    summary: 'Refund a payment, in full or in part',
    description:
      'Refunds `amount` (default: what is left) of a succeeded payment. A Stripe payment is refunded at Stripe first: a clear refusal is a 502 `gateway_error` and changes nothing; when Stripe\'s answer is lost (a timeout, a dropped connection, its 5xx) it is a 502 `gateway_error` too, but the refund stays `pending` with its reservation (see `GET /refunds/{id}`) and is never made twice: retry with the same Idempotency-Key (the error is not stored under it), or Stripe\'s events and the reconciliation sweep settle it. An external or test payment is recorded. The invoice\'s `amount_paid` goes down: a paid invoice becomes `partial` or `sent`. Fires `payment.refunded`.',
    tag: 'Payments',
    scopes: ['payments:write', 'invoices:write'],
    record: 'Payment',
    body: refundBody,
    response: { status: 201, description: 'The refund, the payment and the invoice after it', schema: RefundResultShape },
    errors: { '422': 'Unprocessable', '502': 'GatewayError' },
    callsOut: true,
    handle: ({ cred, id, body, requestKey }, s) => s.refunds.refund(cred, id, body, requestKey),
  }),
  route({
    method: 'get',
    path: '/refunds',
    operationId: 'listRefunds',
    summary: 'List refunds',
    description: 'Refunds of the business and mode, oldest first; `pending` ones are those whose outcome at the payment gateway is not known yet.',
    tag: 'Payments',
    scopes: ['payments:read', 'invoices:read'],
    query: listRefundsQuery,
    response: { status: 200, description: 'A page of refunds', schema: RefundList },
    handle: ({ cred, query }, s) => s.refunds.list(cred, query),
  }),
  route({
    method: 'get',
    path: '/refunds/{id}',
    operationId: 'getRefund',
    summary: 'Read a refund',
    tag: 'Payments',
    scopes: ['payments:read', 'invoices:read'],
    record: 'Refund',
    response: { status: 200, description: 'The refund', schema: RefundEnvelope },
    handle: async ({ cred, id }, s) => ({ refund: await s.refunds.get(cred, id) }),
  }),
];
