/** Every partner endpoint, resource by resource: the Express routes and the OpenAPI paths are both built from this list. */
import { businessRoutes } from './businesses/routes';
import { clientRoutes } from './clients/routes';
import { contractRoutes } from './contracts/routes';
import { creditNoteRoutes } from './credit-notes/routes';
import { einvoiceRoutes } from './einvoice/routes';
import { eventRoutes } from './events/routes';
import { expenseRoutes } from './expenses/routes';
import { Route } from './http/routes';
import { invoiceRoutes } from './invoices/routes';
import { paymentRoutes } from './payments/routes';
import { quickChargeRoutes } from './quick-charge/routes';
import { recurringInvoiceRoutes } from './recurring-invoices/routes';
import { refundRoutes } from './refunds/routes';
import type { Services } from './services';
import { taxRateRoutes } from './tax-rates/routes';
import { testClockRoutes } from './test-clock/routes';
import { webhookRoutes } from './webhooks/routes';

/** Each table names the services it calls; typing the list checks that the Services provide them. */
export const partnerRoutes: Route<Services>[] = [
  ...businessRoutes,
  ...clientRoutes,
  ...invoiceRoutes,
  ...quickChargeRoutes,
  ...taxRateRoutes,
  ...paymentRoutes,
  ...refundRoutes,
  ...creditNoteRoutes,
  ...recurringInvoiceRoutes,
  ...einvoiceRoutes,
  ...webhookRoutes,
  ...eventRoutes,
  ...expenseRoutes,
  ...contractRoutes,
  ...testClockRoutes,
];
