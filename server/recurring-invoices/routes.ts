import { routeUsing } from '../http/routes';
import { createRecurringInvoiceBody, listRecurringInvoicesQuery, RecurringInvoiceEnvelope, RecurringInvoiceList, updateRecurringInvoiceBody } from './schema';
import { RecurringInvoiceService } from './service';

const route = routeUsing<{ recurringInvoices: RecurringInvoiceService }>();

export const recurringInvoiceRoutes = [
  route({
    method: 'post',
    path: '/recurring-invoices',
    operationId: 'createRecurringInvoice',
    summary: 'Create a recurring invoice',
    description:
      'A schedule that issues one invoice of `items` to the client on each date: `start_date` (today or later, UTC, by the clock of the business and mode), then every `interval_count` weeks, months, quarters or years counted from it (a month-end start stays on the last day of shorter months: Jan 31 → Feb 28 → Mar 31), up to `end_date` if given. On each date a sweep issues the invoice dated that day (issue_date, created_at and sent_at at 00:00 UTC), due `days_until_due` days later: e-mailed to the client as POST /invoices/{id}/send does when `auto_send` (default true; `invoice.created` then `invoice.sent`), otherwise issued (numbered, `sent`, payment link, `invoice.created`) without an e-mail. Each date is issued once, whatever the number of server processes; after downtime each missed date is issued, one invoice per date. The lines are priced now (prices in the currency\'s decimals, active tax rates, the rate rules) and again on each date for the client as it is then. A client of another business or mode is a 422 `errors.client_id`.',
    tag: 'Recurring invoices',
    scopes: ['invoices:write'],
    body: createRecurringInvoiceBody,
    response: { status: 201, description: 'The new recurring invoice', schema: RecurringInvoiceEnvelope },
    handle: async ({ cred, body }, s) => ({ recurring_invoice: await s.recurringInvoices.create(cred, body) }),
  }),
  route({
    method: 'get',
    path: '/recurring-invoices',
    operationId: 'listRecurringInvoices',
    summary: 'List recurring invoices',
    description: 'The recurring invoices of the business and mode, oldest first; filters `status` and `client_id`.',
    tag: 'Recurring invoices',
    scopes: ['invoices:read'],
    query: listRecurringInvoicesQuery,
    response: { status: 200, description: 'A page of recurring invoices', schema: RecurringInvoiceList },
    handle: ({ cred, query }, s) => s.recurringInvoices.list(cred, query),
  }),
  route({
    method: 'get',
    path: '/recurring-invoices/{id}',
    operationId: 'getRecurringInvoice',
    summary: 'Read a recurring invoice',
    tag: 'Recurring invoices',
    scopes: ['invoices:read'],
    record: 'Recurring invoice',
    response: { status: 200, description: 'The recurring invoice, with the invoices it issued', schema: RecurringInvoiceEnvelope },
    handle: async ({ cred, id }, s) => ({ recurring_invoice: await s.recurringInvoices.get(cred, id) }),
  }),
  route({
    method: 'patch',
    path: '/recurring-invoices/{id}',
    operationId: 'updateRecurringInvoice',
    summary: 'Change, pause or resume a recurring invoice',
    description:
      'Changes what the next invoices take: `items`, `default_tax_rate_ids`, `days_until_due`, `auto_send`, `metadata` (merged), `end_date` (null: no end; a date before `next_issue_date` ends the schedule), `start_date` (only before its first invoice; today or later), and `status`: `paused` issues nothing until `active` again, and resuming does not issue the dates that came while it was paused (`next_issue_date` becomes the first date after today). Invoices already issued do not change. An ended schedule is a 422 `invalid_state`; the client, currency and cadence never change (422 naming the field).',
    tag: 'Recurring invoices',
    scopes: ['invoices:write'],
    record: 'Recurring invoice',
    body: updateRecurringInvoiceBody,
    response: { status: 200, description: 'The updated recurring invoice', schema: RecurringInvoiceEnvelope },
    handle: async ({ cred, id, body }, s) => ({ recurring_invoice: await s.recurringInvoices.update(cred, id, body) }),
  }),
  route({
    method: 'post',
    path: '/recurring-invoices/{id}/cancel',
    operationId: 'cancelRecurringInvoice',
    summary: 'Cancel a recurring invoice',
    description: 'Ends the schedule (`status: ended`, `next_issue_date: null`): it issues nothing more, and cannot be resumed. Its invoices stay as they are. An ended one is a 422 `invalid_state`.',
    tag: 'Recurring invoices',
    scopes: ['invoices:write'],
    record: 'Recurring invoice',
    response: { status: 200, description: 'The ended recurring invoice', schema: RecurringInvoiceEnvelope },
    handle: async ({ cred, id }, s) => ({ recurring_invoice: await s.recurringInvoices.cancel(cred, id) }),
  }),
];
