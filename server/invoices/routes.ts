import { Actor } from '../auth/actor';
import { routeUsing } from '../http/routes';
import { InvoiceDocuments } from './documents';
import { Deleted } from '../shapes/common';
import {
  createInvoiceBody,
  ExternalPayment,
  externalPaymentBody,
  InvoiceEnvelope,
  InvoiceList,
  listInvoicesQuery,
  PaymentLink,
  PaymentStatusReport,
  RecordedPayment,
  RecordedPaymentShape,
  SentInvoiceShape,
  simulatePaymentBody,
  updateInvoiceBody,
} from './schema';
import { InvoiceService } from './service';

/**
 * What the invoice's payment routes call of the payment path (PaymentService, server/payments/):
 * it records against invoices, so it sits above them, and this table names what it calls.
 */
interface InvoicePayments {
  simulate(actor: Actor, invoiceId: number, amount?: number): Promise<RecordedPayment>;
  recordExternal(actor: Actor, invoiceId: number, input: ExternalPayment): Promise<RecordedPayment>;
}

const route = routeUsing<{ invoices: InvoiceService; documents: InvoiceDocuments; payments: InvoicePayments }>();

export const invoiceRoutes = [
  route({
    method: 'get',
    path: '/invoices',
    operationId: 'listInvoices',
    summary: 'List invoices',
    tag: 'Invoices',
    scopes: ['invoices:read'],
    query: listInvoicesQuery,
    response: { status: 200, description: 'A page of invoices (without payments)', schema: InvoiceList },
    handle: ({ cred, query }, s) => s.invoices.list(cred, query),
  }),
  route({
    method: 'post',
    path: '/invoices',
    operationId: 'createInvoice',
    summary: 'Create a draft invoice',
    description:
      'Fires `invoice.created`. An unknown client_id, a due_date not after issue_date, an amount with more decimals than the currency allows or a negative total is a 422.',
    tag: 'Invoices',
    scopes: ['invoices:write'],
    body: createInvoiceBody,
    response: { status: 201, description: 'The new draft', schema: InvoiceEnvelope },
    handle: async ({ cred, body }, s) => ({ invoice: await s.invoices.create(cred, body) }),
  }),
  route({
    method: 'get',
    path: '/invoices/{id}',
    operationId: 'getInvoice',
    summary: 'Read an invoice with its line items and payments',
    tag: 'Invoices',
    scopes: ['invoices:read'],
    record: 'Invoice',
    response: { status: 200, description: 'The invoice', schema: InvoiceEnvelope },
    handle: async ({ cred, id }, s) => ({ invoice: await s.invoices.get(cred, id) }),
  }),
  route({
    method: 'get',
    path: '/invoices/{id}/pdf',
    operationId: 'getInvoicePdf',
    summary: 'Download the invoice as a PDF',
    description:
      'The invoice on A4 (items, totals, payments, notes and, while money is due, the payment link); once paid, the receipt, with the payment date and method. A draft is marked as not issued. Errors are JSON like every other route.',
    tag: 'Invoices',
    scopes: ['invoices:read'],
    record: 'Invoice',
    response: { status: 200, description: 'The PDF, as a download named `INV-000001.pdf` (`receipt-INV-000001.pdf` once paid)', file: 'application/pdf' },
    handle: ({ cred, id }, s) => s.documents.pdf(cred, id),
  }),
  route({
    method: 'patch',
    path: '/invoices/{id}',
    operationId: 'updateInvoice',
    summary: 'Update a draft invoice',
    description: 'Only a draft can be updated: otherwise 422 `invalid_state`.',
    tag: 'Invoices',
    scopes: ['invoices:write'],
    record: 'Invoice',
    body: updateInvoiceBody,
    response: { status: 200, description: 'The updated draft', schema: InvoiceEnvelope },
    handle: async ({ cred, id, body }, s) => ({ invoice: await s.invoices.update(cred, id, body) }),
  }),
  route({
    method: 'delete',
    path: '/invoices/{id}',
    operationId: 'deleteInvoice',
    summary: 'Delete a draft invoice',
    description: 'Only a draft can be deleted: otherwise 422 `invalid_state`.',
    tag: 'Invoices',
    scopes: ['invoices:write'],
    record: 'Invoice',
    response: { status: 200, description: 'Deleted', schema: Deleted },
    errors: { '422': 'Unprocessable' },
    handle: ({ cred, id }, s) => s.invoices.remove(cred, id),
  }),
  route({
    method: 'post',
    path: '/invoices/{id}/send',
    operationId: 'sendInvoice',
    summary: 'E-mail the invoice to its client',
    description:
      'Issues a draft (status sent, number assigned) and fires `invoice.sent`. Re-sending a sent invoice is a reminder. The e-mail goes out after the change commits: `email.status` is `sent` when the mail server accepted it within a few seconds, `queued` when it is retried later, and `suppressed` under a test key (no e-mail leaves). A paid or void invoice is a 422 `invalid_state`.',
    tag: 'Invoices',
    scopes: ['invoices:write'],
    record: 'Invoice',
    response: { status: 200, description: 'The invoice and the e-mail', schema: SentInvoiceShape },
    handle: ({ cred, id }, s) => s.invoices.send(cred, id),
    afterCommitOutcome: ({ cred, id }, s) => s.invoices.sentOutcome(cred, id),
  }),
  route({
    method: 'get',
    path: '/invoices/{id}/payment-status',
    operationId: 'getInvoicePaymentStatus',
    summary: 'Payment status and outstanding amount',
    tag: 'Invoices',
    scopes: ['invoices:read'],
    record: 'Invoice',
    response: { status: 200, description: 'The status', schema: PaymentStatusReport },
    handle: ({ cred, id }, s) => s.invoices.paymentStatus(cred, id),
  }),
  route({
    method: 'post',
    path: '/invoices/{id}/initiate-payment',
    operationId: 'initiateInvoicePayment',
    summary: 'Get the invoice\'s payment URL',
    description:
      'Issues a draft (status sent, number assigned; no e-mail, no `invoice.sent`). A paid or void invoice is a 422 `invalid_state`. On 403, `required_scope` names invoices:write.',
    tag: 'Invoices',
    scopes: ['invoices:write', 'payments:write'],
    record: 'Invoice',
    response: { status: 200, description: 'The payment link', schema: PaymentLink },
    handle: ({ cred, id }, s) => s.invoices.initiatePayment(cred, id),
  }),
  route({
    method: 'post',
    path: '/invoices/{id}/simulate-payment',
    operationId: 'simulateInvoicePayment',
    summary: 'Test mode: record a payment',
    description:
      'Test keys only (a live key gets 403 `test_mode_only`). Records a succeeded payment (default: the amount due), fires `payment.received`, and `invoice.paid` when fully paid. An amount above the amount due, or a draft, paid or void invoice, is a 422.',
    tag: 'Invoices',
    scopes: ['invoices:write', 'payments:write'],
    record: 'Invoice',
    body: simulatePaymentBody,
    response: { status: 201, description: 'The payment and the invoice', schema: RecordedPaymentShape },
    errors: { '403': 'ForbiddenOrTestModeOnly' },
    handle: ({ cred, id, body }, s) => s.payments.simulate(cred, id, body.amount),
  }),
  route({
    method: 'post',
    path: '/invoices/{id}/payments',
    operationId: 'recordInvoicePayment',
    summary: 'Record a payment received elsewhere',
    description:
      'A payment taken outside the service (a shop\'s checkout, a bank transfer, cash), in live and test mode: `gateway: "external"`, the method given, `reference` as `gateway_reference`. Fires `payment.received`, and `invoice.paid` when settled. An amount above the amount due, or a draft, paid or void invoice, is a 422.',
    tag: 'Invoices',
    scopes: ['payments:write', 'invoices:write'],
    record: 'Invoice',
    body: externalPaymentBody,
    response: { status: 201, description: 'The payment and the invoice', schema: RecordedPaymentShape },
    handle: ({ cred, id, body }, s) => s.payments.recordExternal(cred, id, body),
  }),
  route({
    method: 'post',
    path: '/invoices/{id}/void',
    operationId: 'voidInvoice',
    summary: 'Void an invoice (extension)',
    description: 'Cancels a draft, sent or viewed invoice that has taken no money; a paid, partly paid or void one is a 422 `invalid_state`. Its open checkout at the payment gateway is expired once the void is saved, so it can no longer be paid.',
    tag: 'Invoices',
    scopes: ['invoices:write'],
    record: 'Invoice',
    response: { status: 200, description: 'The void invoice', schema: InvoiceEnvelope },
    handle: async ({ cred, id }, s) => ({ invoice: await s.invoices.void(cred, id) }),
  }),
];
