/** Invoice input: shapes here; money, dates against each other and the client are checked by the service. */
import Joi from 'joi';
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

export const listInvoicesQuery = withMetadataFilter(
  listQuery<InvoiceListParams>({
    status: Joi.string()
      .valid(...INVOICE_STATUSES)
      .description('Only invoices in this status; an unknown value is a 400'),
    client_id: idFilter('client_id'),
  }),
);
