import { documentBody } from '../http/document-body';
import { routeUsing } from '../http/routes';
import { Deleted } from '../shapes/common';
import { createExpenseBody, ExpenseEnvelope, ExpenseList, importExpenseQuery, listExpensesQuery, updateExpenseBody } from './schema';
import { MAX_DOCUMENT_BYTES } from './received-document';
import type { ExpenseService } from './service';

const route = routeUsing<{ expenses: ExpenseService }>();

export const expenseRoutes = [
  route({
    method: 'get',
    path: '/expenses',
    operationId: 'listExpenses',
    summary: 'List expenses',
    tag: 'Expenses',
    scopes: ['expenses:read'],
    query: listExpensesQuery,
    response: { status: 200, description: 'A page of expenses', schema: ExpenseList },
    handle: ({ cred, query }, s) => s.expenses.list(cred, query),
  }),
  route({
    method: 'post',
    path: '/expenses',
    operationId: 'createExpense',
    summary: 'Create an expense',
    tag: 'Expenses',
    scopes: ['expenses:write'],
    body: createExpenseBody,
    response: { status: 201, description: 'The new expense', schema: ExpenseEnvelope },
    handle: async ({ cred, body }, s) => ({ expense: await s.expenses.create(cred, body) }),
  }),
  route({
    method: 'post',
    path: '/expenses/import',
    operationId: 'importExpense',
    summary: 'Import a received e-invoice as an expense',
    description: [
      'The body is the e-invoice itself, at most 10 MB: a UBL 2.1 Invoice or a UN/CEFACT CII CrossIndustryInvoice as `application/xml`, or a Factur-X / ZUGFeRD PDF carrying `factur-x.xml`, `zugferd-invoice.xml` or `xrechnung.xml` as `application/pdf`.',
      'The expense: `vendor` the seller\'s name (BT-27), `amount` the total with tax and rounding (BT-112 + BT-114), `currency` (BT-5), `date` the issue date (BT-2), `description` the invoice number (BT-1) and its first line (BT-153), `tax_amount` (BT-110), `vendor_tax_id` (BT-31), `document_number` (BT-1), and `category` from the query.',
      'One document is one expense per business and mode: the same seller VAT identifier (or, without one, the same seller name) and invoice number again is 409 `duplicate_document` with the `expense_id` of the first. A credit note (by its root or its type code, BT-3) or a document that is no invoice (a proforma, a reminder, a customs invoice…) is 422 `unsupported_document`; XML that is not well-formed, not XML 1.0, has a DOCTYPE or is not UTF-8, a PDF that is malformed, encrypted, unpacks to more than 64 MB or carries no e-invoice, or a document that takes over 10 seconds to read is 422 `invalid_document`; missing or misstated terms (a total in another currency than BT-5 included) are 422 `validation_failed` with `errors` by BT. Nothing is written then.',
      'The body may come gzip-, deflate- or br-encoded (`Content-Encoding`; another is 400). With an Idempotency-Key, the request is the document\'s bytes once that encoding is undone (with its media type and the query).',
    ].join('\n\n'),
    tag: 'Expenses',
    scopes: ['expenses:write'],
    query: importExpenseQuery,
    document: documentBody(['application/xml', 'application/pdf'], MAX_DOCUMENT_BYTES, 'The e-invoice: UBL or CII XML, or a Factur-X / ZUGFeRD PDF'),
    // Read on a worker thread for up to 10 seconds: not inside the Idempotency-Key's transaction.
    callsOut: true,
    response: { status: 201, description: 'The new expense', schema: ExpenseEnvelope },
    errors: { '409': 'DuplicateDocument', '413': 'DocumentTooLarge', '422': 'DocumentRefused' },
    handle: async ({ cred, body, query }, s) => ({ expense: await s.expenses.import(cred, body, query.category) }),
  }),
  route({
    method: 'get',
    path: '/expenses/{id}',
    operationId: 'getExpense',
    summary: 'Read an expense',
    tag: 'Expenses',
    scopes: ['expenses:read'],
    record: 'Expense',
    response: { status: 200, description: 'The expense', schema: ExpenseEnvelope },
    handle: async ({ cred, id }, s) => ({ expense: await s.expenses.get(cred, id) }),
  }),
  route({
    method: 'patch',
    path: '/expenses/{id}',
    operationId: 'updateExpense',
    summary: 'Update an expense',
    tag: 'Expenses',
    scopes: ['expenses:write'],
    record: 'Expense',
    body: updateExpenseBody,
    response: { status: 200, description: 'The updated expense', schema: ExpenseEnvelope },
    handle: async ({ cred, id, body }, s) => ({ expense: await s.expenses.update(cred, id, body) }),
  }),
  route({
    method: 'delete',
    path: '/expenses/{id}',
    operationId: 'deleteExpense',
    summary: 'Delete an expense',
    tag: 'Expenses',
    scopes: ['expenses:write'],
    record: 'Expense',
    response: { status: 200, description: 'Deleted', schema: Deleted },
    handle: ({ cred, id }, s) => s.expenses.remove(cred, id),
  }),
];
