/**
 * Recurring invoices in and out: the request fields (joi: the lines, the cadence and the dates
 * against each other; the client, the tax rates, the prices in the currency and "not in the past"
 * are checked by the service) and the response shapes.
 */
import { Static, Type } from '@sinclair/typebox';
import Joi from 'joi';
import { idFilter, listQuery, ListParams } from '../http/pagination';
import { MAX_ITEMS, recordIdField, taxRateIdsField } from '../invoices/schema';
import { MetadataChanges, metadataField, MetadataShape } from '../metadata/schema';
import { currencyField, MAX_QUANTITY, moneyField } from '../money/amount';
import { MAX_TAX_RATES_PER_LINE } from '../money/tax';
import { closed, Currency, date, dateTime, envelope, Id, listOf, money, text } from '../shapes/common';
import { component, nullable, stringEnum } from '../shapes/component';
import { calendarDate } from '../validation';
import { Interval, INTERVALS, MAX_INTERVAL_COUNT } from './calendar';
import { RECURRING_STATUSES, RecurringStatus } from './model';

/** The longest payment term a schedule gives its invoices. */
export const MAX_DAYS_UNTIL_DUE = 365;

export interface ScheduleLineInput {
  description: string;
  quantity: number;
  unit_price: number;
  tax_rate_ids?: number[];
}

export interface RecurringInvoiceInput {
  client_id: number;
  currency: string;
  items: ScheduleLineInput[];
  default_tax_rate_ids?: number[];
  interval: Interval;
  interval_count?: number;
  start_date: string;
  end_date?: string | null;
  days_until_due: number;
  auto_send?: boolean;
  metadata?: MetadataChanges;
}

/** What PATCH changes: the lines, the dates, the terms and `status` (active ⇄ paused); never the client, currency or cadence. */
export interface RecurringInvoiceChanges {
  items?: ScheduleLineInput[];
  default_tax_rate_ids?: number[];
  start_date?: string;
  end_date?: string | null;
  days_until_due?: number;
  auto_send?: boolean;
  status?: 'active' | 'paused';
  metadata?: MetadataChanges;
}

export interface RecurringInvoiceListParams extends ListParams {
  status?: RecurringStatus;
  client_id?: number;
}

const line = Joi.object<ScheduleLineInput>({
  description: Joi.string().trim().min(1).max(1000).required(),
  quantity: Joi.number().strict().greater(0).max(MAX_QUANTITY).required().description('At most 4 decimals'),
  unit_price: moneyField.required().description("Major units, at most the currency's decimals; may be negative (a discount line)"),
  tax_rate_ids: taxRateIdsField.description("The line's tax rates (active ones); without it, the schedule's default_tax_rate_ids apply"),
});

const items = Joi.array().items(line).min(1).max(MAX_ITEMS).description('The lines of every invoice the schedule issues');
const defaultTaxRateIds = taxRateIdsField.description('Applied to the lines that give no tax_rate_ids');
const startDate = calendarDate.description('The first issue date (UTC): today or later by the clock of the business and mode');
const endDate = calendarDate.allow(null).description('The last date that may be issued (inclusive), on or after start_date; null or absent: no end');
const daysUntilDue = Joi.number()
  .strict()
  .integer()
  .min(1)
  .max(MAX_DAYS_UNTIL_DUE)
  .description(`Each invoice's due date is its issue date plus this many days (1–${MAX_DAYS_UNTIL_DUE})`);
const autoSend = Joi.boolean().strict().description('true (default): each invoice is e-mailed to the client as POST /send does; false: issued (numbered, `sent`, payment link) without an e-mail');

/** `end_date` before `start_date` names end_date. */
function endNotBeforeStart(input: { start_date?: string; end_date?: string | null }, helpers: Joi.CustomHelpers): unknown {
  if (input.start_date && input.end_date && input.end_date < input.start_date) {
    return helpers.error('recurring.endBeforeStart', { start: input.start_date }, { path: ['end_date'] });
  }
  return input;
}

const dateMessages = { 'recurring.endBeforeStart': '{{#label}} must be on or after start_date ({{#start}})' };

export const createRecurringInvoiceBody = Joi.object<RecurringInvoiceInput>({
  client_id: recordIdField.required(),
  currency: currencyField.required(),
  items: items.required(),
  default_tax_rate_ids: defaultTaxRateIds,
  interval: Joi.string()
    .valid(...INTERVALS)
    .required()
    .description('week, month, quarter or year: a month-based date keeps its day of the month, or the last day of a shorter month'),
  interval_count: Joi.number()
    .strict()
    .integer()
    .min(1)
    .default(1)
    .description('How many intervals between two dates (default 1); together at most a year: 52 weeks, 12 months, 4 quarters or 1 year'),
  start_date: startDate.required(),
  end_date: endDate,
  days_until_due: daysUntilDue.required(),
  auto_send: autoSend,
  metadata: metadataField,
})
  .custom((input: RecurringInvoiceInput, helpers) => {
    const max = MAX_INTERVAL_COUNT[input.interval];
    if ((input.interval_count ?? 1) > max) return helpers.error('recurring.tooLong', { interval: input.interval, max }, { path: ['interval_count'] });
    return input;
  })
  .custom(endNotBeforeStart)
  .messages({ ...dateMessages, 'recurring.tooLong': '{{#label}} must be at most {{#max}} with interval {{#interval}}: a schedule issues at least once a year' });

export const updateRecurringInvoiceBody = Joi.object<RecurringInvoiceChanges>({
  items,
  default_tax_rate_ids: defaultTaxRateIds,
  start_date: startDate.description('A new first issue date, today or later: only before the schedule has issued an invoice'),
  end_date: endDate,
  days_until_due: daysUntilDue,
  auto_send: autoSend,
  status: Joi.string()
    .valid('active', 'paused')
    .description('paused: no invoice is issued until it is active again; resuming does not issue the dates that came while it was paused (next_issue_date moves to the first date after today). To end a schedule, POST /cancel'),
  metadata: metadataField,
})
  .custom(endNotBeforeStart)
  .messages({
    ...dateMessages,
    'object.unknown': '{{#label}} cannot change: a recurring invoice takes only items, default_tax_rate_ids, start_date, end_date, days_until_due, auto_send, status and metadata on update (cancel it and create another for a new client, currency or interval)',
  });

export const listRecurringInvoicesQuery = listQuery<RecurringInvoiceListParams>({
  status: Joi.string()
    .valid(...RECURRING_STATUSES)
    .description('Only schedules in this status; an unknown value is a 400'),
  client_id: idFilter('client_id'),
});

export const ScheduleLineShape = component(
  'RecurringInvoiceItem',
  closed({
    description: text(1000, 1),
    quantity: Type.Number({ exclusiveMinimum: 0, maximum: MAX_QUANTITY, description: 'At most 4 decimals' }),
    unit_price: money({ description: 'Major units; may be negative (a discount line)' }),
    tax_rate_ids: nullable(Type.Array(Id, { maxItems: MAX_TAX_RATES_PER_LINE }), { description: "The line's own rates; null: the schedule's default_tax_rate_ids apply" }),
  }),
);

export const RecurringInvoiceShape = component(
  'RecurringInvoice',
  closed(
    {
      id: Id,
      client_id: Id,
      currency: Currency,
      items: Type.Array(ScheduleLineShape, { minItems: 1, maxItems: MAX_ITEMS }),
      default_tax_rate_ids: Type.Array(Id, { maxItems: MAX_TAX_RATES_PER_LINE }),
      interval: stringEnum(INTERVALS),
      interval_count: Type.Integer({ minimum: 1, maximum: 52 }),
      start_date: date,
      end_date: nullable(date, { description: 'The last date that may be issued; null: no end' }),
      days_until_due: Type.Integer({ minimum: 1, maximum: MAX_DAYS_UNTIL_DUE }),
      auto_send: Type.Boolean(),
      status: stringEnum(RECURRING_STATUSES, {
        description: 'active: issues on each date; paused: issues nothing until resumed (the dates meanwhile are skipped); ended: cancelled, or past its end_date (final)',
      }),
      next_issue_date: nullable(date, { description: 'The next date an invoice is issued on (00:00 UTC); null once ended' }),
      invoice_ids: Type.Array(Id, { description: 'The invoices it issued, oldest first' }),
      metadata: MetadataShape,
      livemode: Type.Boolean(),
      created_at: dateTime,
      updated_at: dateTime,
    },
    { description: 'A schedule that issues one invoice of its lines to its client on each date: start_date plus n × interval_count intervals' },
  ),
);
export type RecurringInvoiceView = Static<typeof RecurringInvoiceShape>;

export const RecurringInvoiceList = listOf('RecurringInvoiceList', RecurringInvoiceShape);
export const RecurringInvoiceEnvelope = envelope('RecurringInvoiceEnvelope', 'recurring_invoice', RecurringInvoiceShape);
