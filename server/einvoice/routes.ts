import { routeUsing } from '../http/routes';
import { einvoiceQuery } from './schema';
import { EinvoiceService } from './service';

const route = routeUsing<{ einvoices: EinvoiceService }>();

export const einvoiceRoutes = [
  route({
    method: 'get',
    path: '/invoices/{id}/einvoice',
    operationId: 'getInvoiceEinvoice',
    summary: 'Download the invoice as an EN 16931 e-invoice',
    description:
      'The issued invoice as `ubl` (UBL 2.1 per Peppol BIS Billing 3.0) or `cii` (UN/CEFACT CII D16B, EN 16931): its amounts are the API\'s, to the minor unit. An invoice lacking what the format requires is 422 `einvoice_not_ready`, `errors` naming each field by its path with the rule it breaks; a ready draft is 422 `invalid_state` (issue it first).',
    tag: 'Invoices',
    scopes: ['invoices:read'],
    record: 'Invoice',
    query: einvoiceQuery,
    response: { status: 200, description: 'The e-invoice, as a download named `INV-000001-ubl.xml`', file: 'application/xml' },
    errors: { '422': 'EinvoiceNotReady' },
    handle: ({ cred, id, query }, s) => s.einvoices.invoice(cred, id, query.format),
  }),
];
