/** Invoice input: shapes here; money, dates against each other and the client are checked by the service. */
import Joi from 'joi';
import { businessClock } from '../clock';
import { idFilter, listQuery, ListParams } from '../http/pagination';
import { MetadataChanges, metadataField, MetadataFilter, withMetadataFilter } from '../metadata/schema';
import { currencyField, MAX_QUANTITY, moneyField } from '../money/amount';
import { calendarDate, optionalText } from '../validation';
import { INVOICE_STATUSES, InvoiceStatus } from './model';

export const MAX_ITEMS = 500;

export interface ItemInput {
  description: string;
  quantity: number;
  unit_price: number;
}

export interface InvoiceInput {
  client_id: number;
  currency?: string;
  issue_date?: string;
  due_date?: string;
  items: ItemInput[];
  notes?: string | null;
  metadata?: MetadataChanges;
}

export type InvoiceChanges = Partial<Omit<InvoiceInput, 'client_id'>>;

export interface InvoiceListParams extends ListParams, MetadataFilter {
  status?: InvoiceStatus;
  client_id?: number;
}

export const recordIdField = Joi.number().strict().integer().min(1).max(Number.MAX_SAFE_INTEGER);

const item = Joi.object<ItemInput>({
  description: Joi.string().trim().min(1).max(1000).required(),
  quantity: Joi.number().strict().greater(0).max(MAX_QUANTITY).required(),
  unit_price: moneyField.required(),
});

/** An invoice's lines (also quick-charge's). */
export const itemsField = Joi.array().items(item).min(1).max(MAX_ITEMS);

const fields = {
  currency: currencyField,
  issue_date: calendarDate,
  due_date: calendarDate,
  items: itemsField,
  notes: optionalText(5000),
  metadata: metadataField,
};

export const createInvoiceBody = Joi.object<InvoiceInput>({
  ...fields,
  client_id: recordIdField.required(),
  items: fields.items.required(),
});

export const updateInvoiceBody = Joi.object<InvoiceChanges>(fields);

export const simulatePaymentBody = Joi.object<{ amount?: number }>({ amount: moneyField.greater(0) });

/** How a payment received elsewhere was made. */
export const EXTERNAL_METHODS = ['bank_transfer', 'cash', 'card', 'check', 'other'] as const;
export type ExternalMethod = (typeof EXTERNAL_METHODS)[number];

export interface ExternalPayment {
  amount?: number;
  method: ExternalMethod;
  reference?: string | null;
  paid_at?: Date;
  metadata?: MetadataChanges;
}

/** How far ahead of the server's clock a caller's `paid_at` may be (another machine's clock). */
const CLOCK_ALLOWANCE_MS = 5 * 60 * 1000;

export const externalPaymentBody = Joi.object<ExternalPayment>({
  amount: moneyField.greater(0).description('Major units; default: the amount due; at most the amount due'),
  method: Joi.string()
    .valid(...EXTERNAL_METHODS)
    .required()
    .description('How the money was taken'),
  reference: Joi.string().trim().max(255).allow(null, '').description('Your reference (a bank transfer\'s, a shop order\'s transaction id); stored as gateway_reference; need not be unique'),
  paid_at: Joi.date()
    .iso()
    .custom((value: Date, helpers) => {
      // The caller's clock may run a little ahead of ours: within the allowance, the time is taken as now.
      const now = businessClock.now().getTime();
      if (value.getTime() > now + CLOCK_ALLOWANCE_MS) return helpers.error('any.invalid');
      return value.getTime() > now ? new Date(now) : value;
    })
    .messages({ 'any.invalid': 'paid_at must not be in the future (a clock up to 5 minutes ahead is allowed, and taken as now)' })
    .description('When the money was taken (ISO 8601, not in the future; up to 5 minutes ahead is taken as now); default: now'),
  metadata: metadataField,
});

export const listInvoicesQuery = withMetadataFilter(
  listQuery<InvoiceListParams>({
    status: Joi.string()
      .valid(...INVOICE_STATUSES)
      .description('Only invoices in this status; an unknown value is a 400'),
    client_id: idFilter('client_id'),
  }),
);
