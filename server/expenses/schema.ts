/**
 * Expenses in and out: the contract's fields, with the limits and formats the specification leaves
 * to us (joi), and the response shapes.
 */
import { Static, Type } from '@sinclair/typebox';
import Joi from 'joi';
import { AppError } from '../errors';
import { listQuery, ListParams } from '../http/pagination';
import { currencyField, moneyField } from '../money/amount';
import { closed, Currency, date, dateTime, envelope, Id, listOf, money } from '../shapes/common';
import { component, nullable } from '../shapes/component';
import { calendarDate, optionalText } from '../validation';

export interface ExpenseInput {
  /** Major units; its decimals are checked against the currency by the service. */
  amount: number;
  currency?: string;
  category: string;
  date: string;
  description?: string | null;
  vendor?: string | null;
  notes?: string | null;
}

export interface ExpenseListParams extends ListParams {
  category?: string;
  date_from?: string;
  date_to?: string;
}

/** A lower-case slug as given (`travel`, `office-supplies`): other input is refused, never rewritten. */
const CATEGORY_SLUG = /^[a-z0-9]+(?:[-_][a-z0-9]+)*$/;
const CATEGORY_MAX = 64;

/** The columns of an imported e-invoice's identity: longer values are refused, never cut. */
export const VENDOR_TAX_ID_MAX = 100;
export const DOCUMENT_NUMBER_MAX = 255;

const category = Joi.string()
  .max(CATEGORY_MAX)
  .pattern(CATEGORY_SLUG)
  .messages({ 'string.pattern.base': '{{#label}} must be a lower-case slug such as "travel" or "office-supplies"' });

const fields = {
  amount: moneyField.greater(0),
  currency: currencyField,
  category,
  date: calendarDate,
  description: optionalText(1000),
  vendor: optionalText(255),
  notes: optionalText(5000),
};

export const createExpenseBody = Joi.object<ExpenseInput>({
  ...fields,
  amount: fields.amount.required(),
  category: fields.category.required(),
  date: fields.date.required(),
});

export const updateExpenseBody = Joi.object<Partial<ExpenseInput>>(fields);

export interface ImportExpenseQuery {
  category: string;
}

export const importExpenseQuery = Joi.object<ImportExpenseQuery>({
  category: category.default('other').description('The category of the new expense (default `other`)'),
});

export const listExpensesQuery = listQuery<ExpenseListParams>({
  category: category.description('Only this category'),
  date_from: calendarDate.description('Expenses dated on or after this day'),
  date_to: calendarDate.description('Expenses dated on or before this day (not before date_from)'),
})
  // 'YYYY-MM-DD' text compares in date order.
  .custom((value: ExpenseListParams, helpers) =>
    value.date_from && value.date_to && value.date_from > value.date_to
      ? helpers.error('date.range', {}, { path: ['date_to'] })
      : value,
  )
  .messages({ 'date.range': 'date_to must not be before date_from' });

export const ExpenseCategoryShape = component(
  'ExpenseCategory',
  Type.String({ maxLength: CATEGORY_MAX, pattern: CATEGORY_SLUG.source, description: 'A free lower-case slug (`travel`, `office-supplies`)' }),
);

export const ExpenseShape = component(
  'Expense',
  closed({
    id: Id,
    amount: money({ exclusiveMinimum: 0 }),
    currency: Currency,
    category: ExpenseCategoryShape,
    description: nullable(Type.String({ maxLength: 1000 })),
    vendor: nullable(Type.String({ maxLength: 255 })),
    date,
    notes: nullable(Type.String({ maxLength: 5000 })),
    tax_amount: nullable(money({ description: 'The tax of an expense imported from an e-invoice (its BT-110); null otherwise' })),
    vendor_tax_id: nullable(Type.String({ maxLength: VENDOR_TAX_ID_MAX, description: "The seller's VAT identifier of an imported e-invoice (BT-31); null otherwise" })),
    document_number: nullable(Type.String({ maxLength: DOCUMENT_NUMBER_MAX, description: 'The invoice number of an imported e-invoice (BT-1); null otherwise' })),
    livemode: Type.Boolean(),
    created_at: dateTime,
    updated_at: dateTime,
  }),
);
export type ExpenseView = Static<typeof ExpenseShape>;

export const ExpenseList = listOf('ExpenseList', ExpenseShape);
export const ExpenseEnvelope = envelope('ExpenseEnvelope', 'expense', ExpenseShape);

/** 422: the body is not a readable e-invoice (malformed or hostile XML, a PDF without one); nothing was written. */
export class InvalidDocument extends AppError {
  static readonly code = 'invalid_document';

  constructor(message: string) {
    super(422, InvalidDocument.code, message);
  }
}

/** 422: a readable document that is not imported as an expense (a credit note, XML of another kind); nothing was written. */
export class UnsupportedDocument extends AppError {
  static readonly code = 'unsupported_document';

  constructor(message: string) {
    super(422, UnsupportedDocument.code, message);
  }
}

/** 409: this business and mode already imported the document (same seller and number): `expense_id` names its expense. */
export class DuplicateDocument extends AppError {
  static readonly code = 'duplicate_document';

  constructor(expenseId: number, vendor: string, number: string) {
    super(409, DuplicateDocument.code, `Invoice ${number} of ${vendor} was already imported as expense ${expenseId}`, undefined, { expense_id: expenseId });
  }
}

/** 503: every document reader is busy and the queue is full; nothing was written. */
export class DocumentReadersBusy extends AppError {
  static readonly code = 'service_unavailable';
  override readonly retryAfterSeconds = 5;

  constructor() {
    super(503, DocumentReadersBusy.code, 'Too many documents are being read right now: retry after the seconds given by Retry-After; nothing was written');
  }
}
