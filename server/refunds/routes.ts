import { route } from '../http/routes';
import { refundBody } from './service';

export const refundRoutes = [
  route({
    method: 'post',
    path: '/payments/{id}/refund',
    operationId: 'refundPayment',
    summary: 'Refund a payment, in full or in part',
    description:
      'Refunds `amount` (default: what is left) of a succeeded payment. A Stripe payment is refunded at Stripe first (a refusal is a 502 `gateway_error` and changes nothing); an external or test payment is recorded. The invoice\'s `amount_paid` goes down: a paid invoice becomes `partial` or `sent`. Fires `payment.refunded`.',
    tag: 'Payments',
    scopes: ['payments:write', 'invoices:write'],
    record: 'Payment',
    body: refundBody,
    response: { status: 201, description: 'The refund, the payment and the invoice after it', schema: 'RefundResult' },
    errors: { '422': 'Unprocessable', '502': 'GatewayError' },
    callsOut: true,
    handle: ({ cred, id, body, requestKey }, s) => s.refunds.refund(cred, id, body, requestKey),
  }),
];
