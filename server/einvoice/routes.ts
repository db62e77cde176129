import { routeUsing } from '../http/routes';
import { einvoiceQuery } from './schema';
import { EinvoiceService } from './service';

const route = routeUsing<{ einvoices: EinvoiceService }>();

const FORMATS =
  '`ubl` (UBL 2.1 per Peppol BIS Billing 3.0), `cii` (UN/CEFACT CII D16B, EN 16931), `facturx` (the PDF as PDF/A-3 with the CII document embedded as `factur-x.xml`, Factur-X 1.0 / ZUGFeRD 2 profile EN 16931), `xrechnung-ubl` or `xrechnung-cii` (XRechnung 3.0)';

export const einvoiceRoutes = [
  route({
    method: 'get',
    path: '/invoices/{id}/einvoice',
    operationId: 'getInvoiceEinvoice',
    summary: 'Download the invoice as an EN 16931 e-invoice',
    description: `The issued invoice as ${FORMATS}: its amounts are the API's, to the minor unit. An invoice lacking what the format requires is 422 \`einvoice_not_ready\`, \`errors\` naming each field by its path with the rule it breaks; a ready draft is 422 \`invalid_state\` (issue it first).`,
    tag: 'Invoices',
    scopes: ['invoices:read'],
    record: 'Invoice',
    query: einvoiceQuery,
    response: { status: 200, description: 'The e-invoice, as a download named `INV-000001-ubl.xml` (`INV-000001-facturx.pdf` for Factur-X)', file: ['application/xml', 'application/pdf'] },
    errors: { '422': 'EinvoiceNotReady' },
    handle: ({ cred, id, query }, s) => s.einvoices.invoice(cred, id, query.format),
  }),
  route({
    method: 'get',
    path: '/credit-notes/{id}/einvoice',
    operationId: 'getCreditNoteEinvoice',
    summary: 'Download the credit note as an EN 16931 e-invoice',
    description: `The credit note as ${FORMATS}: UBL's \`CreditNote\`, CII's type code 381, each naming the invoice it corrects (BG-3) and saying how it was settled (BT-20); its parties are the invoice's snapshot, its amounts the API's. A credit note lacking what the format requires is 422 \`einvoice_not_ready\`, \`errors\` naming each field of its snapshot by its path with the rule it breaks.`,
    tag: 'Credit notes',
    scopes: ['invoices:read'],
    record: 'Credit note',
    query: einvoiceQuery,
    response: { status: 200, description: 'The e-invoice, as a download named `CN-000001-ubl.xml` (`CN-000001-facturx.pdf` for Factur-X)', file: ['application/xml', 'application/pdf'] },
    errors: { '422': 'EinvoiceNotReady' },
    handle: ({ cred, id, query }, s) => s.einvoices.creditNote(cred, id, query.format),
  }),
];
