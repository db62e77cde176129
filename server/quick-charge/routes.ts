import { routeUsing } from '../http/routes';
import { quickChargeBody, QuickChargeResultShape } from './schema';
import { QuickChargeService } from './service';

const route = routeUsing<{ quickCharge: QuickChargeService }>();

export const quickChargeRoutes = [
  route({
    method: 'post',
    path: '/quick-charge',
    operationId: 'quickCharge',
    summary: 'Create an issued invoice and its payment URL in one call',
    description: 'Exactly one of `client_id` and `client`. The client is found by e-mail within the business and mode, or created. Fires `invoice.created`.',
    tag: 'Invoices',
    scopes: ['invoices:write'],
    body: quickChargeBody,
    response: { status: 201, description: 'The invoice, the client and the payment URL', schema: QuickChargeResultShape },
    handle: ({ cred, body }, s) => s.quickCharge.charge(cred, body),
  }),
];
