import { routeUsing } from '../http/routes';
import { createCreditNoteBody, CreditNoteEnvelope, CreditNoteList, CreditNoteResultShape, listCreditNotesQuery, VoidedInvoiceShape } from './schema';
import { CreditNoteService } from './service';

const route = routeUsing<{ creditNotes: CreditNoteService }>();

export const creditNoteRoutes = [
  route({
    method: 'post',
    path: '/invoices/{id}/credit-notes',
    operationId: 'createCreditNote',
    summary: 'Credit an issued invoice',
    description:
      'Issues a numbered credit note (`CN-000001`, its own gapless series per business and mode) on a sent, viewed, partly paid or paid invoice (a draft or void one is a 422 `invalid_state`). Each line is an invoice line (`invoice_item_id`: its description, unit price and tax rates are copied; `quantity` defaults to, and may not exceed, what earlier credit notes left of it) or a line of its own (`description`, `quantity`, `unit_price`, `tax_rate_ids` of active rates). Taxes follow the invoice\'s rules and buyer. Its total must be above zero, and the invoice\'s credit notes together never exceed its total (422). It first takes what it can off the amount due (`amount_applied`); the rest is refunded from the invoice\'s payments, newest first, with `refund: true` (`amount_refunded`, `refund_ids`; a Stripe refund whose outcome is unknown stays `pending` and the credit note is still made), or recorded as settled outside the service (`out_of_band_amount`). Then the invoice\'s status follows: nothing paid and credits covering the total → `void`; payments and credits covering it → `paid` (`invoice.paid` if it was not). Fires `credit_note.created`.',
    tag: 'Credit notes',
    scopes: ['invoices:write'],
    record: 'Invoice',
    body: createCreditNoteBody,
    response: { status: 201, description: 'The credit note and the invoice after it', schema: CreditNoteResultShape },
    callsOut: true,
    handle: ({ cred, id, body }, s) => s.creditNotes.create(cred, id, body),
  }),
  route({
    method: 'post',
    path: '/invoices/{id}/void',
    operationId: 'voidInvoice',
    summary: 'Void an invoice (extension)',
    description:
      'Cancels an invoice that holds no money; a paid or partly paid one is a 422 `invalid_state` (refund its payments, or credit it with `refund: true`), and so is a void one. A draft is voided as it is (`credit_note: null`); an issued invoice is cancelled by a credit note for what its earlier credit notes left uncredited (reason `other`, memo `Cancelled`, `credit_note.created`), so the numbered series keeps the cancellation. Its open checkout at the payment gateway is expired once the void is saved, so it can no longer be paid.',
    tag: 'Invoices',
    scopes: ['invoices:write'],
    record: 'Invoice',
    response: { status: 200, description: 'The void invoice, and the credit note that cancelled it', schema: VoidedInvoiceShape },
    handle: ({ cred, id }, s) => s.creditNotes.voidInvoice(cred, id),
  }),
  route({
    method: 'get',
    path: '/credit-notes',
    operationId: 'listCreditNotes',
    summary: 'List credit notes',
    description: 'The credit notes of the business and mode, oldest first; filters `invoice_id` and `client_id`.',
    tag: 'Credit notes',
    scopes: ['invoices:read'],
    query: listCreditNotesQuery,
    response: { status: 200, description: 'A page of credit notes', schema: CreditNoteList },
    handle: ({ cred, query }, s) => s.creditNotes.list(cred, query),
  }),
  route({
    method: 'get',
    path: '/credit-notes/{id}',
    operationId: 'getCreditNote',
    summary: 'Read a credit note',
    tag: 'Credit notes',
    scopes: ['invoices:read'],
    record: 'Credit note',
    response: { status: 200, description: 'The credit note', schema: CreditNoteEnvelope },
    handle: async ({ cred, id }, s) => ({ credit_note: await s.creditNotes.get(cred, id) }),
  }),
  route({
    method: 'get',
    path: '/credit-notes/{id}/pdf',
    operationId: 'getCreditNotePdf',
    summary: 'Download the credit note as a PDF',
    description: 'The credit note on A4: both parties as the invoice names them, the invoice it corrects, its lines, the tax per rate and how its total was settled. Errors are JSON like every other route.',
    tag: 'Credit notes',
    scopes: ['invoices:read'],
    record: 'Credit note',
    response: { status: 200, description: 'The PDF, as a download named `CN-000001.pdf`', file: 'application/pdf' },
    handle: ({ cred, id }, s) => s.creditNotes.pdf(cred, id),
  }),
];
