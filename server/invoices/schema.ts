/**
 * Invoices in and out: the request fields (joi; money, dates against each other and the client are
 * checked by the service) and the response shapes (server/shapes).
 */
import { Static, Type } from '@sinclair/typebox';
import Joi from 'joi';
import { businessClock } from '../clock';
import { idFilter, listQuery, ListParams } from '../http/pagination';
import { MetadataChanges, metadataField, MetadataFilter, MetadataShape, withMetadataFilter } from '../metadata/schema';
import { currencyField, MAX_QUANTITY, moneyField } from '../money/amount';
import { closed, Currency, date, dateTime, envelope, Id, listOf, money, text } from '../shapes/common';
import { component, described, nullable, stringEnum } from '../shapes/component';
import { Buyer, TaxExemptShape } from '../clients/schema';
import { Seller } from '../businesses/schema';
import { MAX_TAX_RATES_PER_LINE, TAX_EXEMPT_VALUES, TaxExempt } from '../money/tax';
import { TaxCategoryShape } from '../tax-rates/schema';
import { calendarDate, optionalText } from '../validation';
import { INVOICE_STATUSES, InvoiceStatus } from './model';
import { PaymentShape } from '../payments/schema';

export const MAX_ITEMS = 500;

/** Tax computed elsewhere for one line and rate, in major units. */
export interface TaxAmountInput {
  tax_rate_id: number;
  amount: number;
}

export interface ItemInput {
  description: string;
  quantity: number;
  unit_price: number;
  tax_rate_ids?: number[];
  tax_amounts?: TaxAmountInput[];
}

/** What taxes an invoice as a whole (POST /invoices, PATCH, quick-charge). */
export interface InvoiceTaxInput {
  default_tax_rate_ids?: number[];
  tax_exempt?: TaxExempt;
  rounding_amount?: number;
}

export interface InvoiceInput extends InvoiceTaxInput {
  client_id: number;
  currency?: string;
  issue_date?: string;
  due_date?: string;
  items: ItemInput[];
  notes?: string | null;
  buyer_reference?: string | null;
  purchase_order?: string | null;
  metadata?: MetadataChanges;
}

/** A draft's changes: `tax_exempt: null` makes it follow its client's tax status again. */
export type InvoiceChanges = Partial<Omit<InvoiceInput, 'client_id' | 'tax_exempt'>> & { tax_exempt?: TaxExempt | null };

export interface InvoiceListParams extends ListParams, MetadataFilter {
  status?: InvoiceStatus;
  client_id?: number;
  overdue?: boolean;
}

export const recordIdField = Joi.number().strict().integer().min(1).max(Number.MAX_SAFE_INTEGER);

/** Tax rate ids: distinct, at most five (a line's own, or an invoice's defaults). */
export const taxRateIdsField = Joi.array().items(recordIdField).max(MAX_TAX_RATES_PER_LINE).unique();

const item = Joi.object<ItemInput>({
  description: Joi.string().trim().min(1).max(1000).required(),
  quantity: Joi.number().strict().greater(0).max(MAX_QUANTITY).required(),
  unit_price: moneyField.required(),
  tax_rate_ids: taxRateIdsField.description("The line's tax rates; without it, the invoice's default_tax_rate_ids apply"),
  tax_amounts: Joi.array()
    .items(Joi.object({ tax_rate_id: recordIdField.required(), amount: moneyField.required() }))
    .max(MAX_TAX_RATES_PER_LINE)
    .description("Tax computed elsewhere for this line, per rate (major units): within one minor unit of the line's own tax; for a rate, every line carries it or none does"),
});

/** An invoice's lines (also quick-charge's). */
export const itemsField = Joi.array().items(item).min(1).max(MAX_ITEMS);

/** The invoice-wide tax fields, also quick-charge's. */
export const invoiceTaxFields = {
  default_tax_rate_ids: taxRateIdsField.description('Applied to the items that give no tax_rate_ids'),
  tax_exempt: Joi.string()
    .valid(...TAX_EXEMPT_VALUES)
    .description("The buyer's tax status for this invoice, overriding the client's: exempt (category E) or reverse (AE), both at 0 %"),
  rounding_amount: moneyField.description('A rounding settled elsewhere (e.g. a shop whose total and tax lines differ by a cent): at most one minor unit per line, either sign; added to the computed rounding'),
};

const fields = {
  currency: currencyField,
  issue_date: calendarDate,
  due_date: calendarDate,
  items: itemsField,
  notes: optionalText(5000),
  buyer_reference: optionalText(255).description("The buyer's reference (e.g. a German Leitweg-ID); default: the client's buyer_reference"),
  purchase_order: optionalText(255).description("The buyer's purchase order number"),
  metadata: metadataField,
  ...invoiceTaxFields,
};

export const createInvoiceBody = Joi.object<InvoiceInput>({
  ...fields,
  client_id: recordIdField.required(),
  items: fields.items.required(),
});

export const updateInvoiceBody = Joi.object<InvoiceChanges>({
  ...fields,
  tax_exempt: fields.tax_exempt.allow(null).description("The buyer's tax status for this invoice, overriding the client's; null follows the client's again"),
});

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
    // A pattern, not valid(): joi returns a valid() value as it is, before the custom turns it into a boolean.
    overdue: Joi.string()
      .pattern(/^(true|false)$/)
      .custom((value: string) => value === 'true')
      .messages({ 'string.pattern.base': 'overdue must be true or false' })
      .description('`true`: only overdue invoices (see the invoice\'s `overdue`); `false`: only those that are not; anything else is a 400'),
  }),
);

export const InvoiceStatusShape = component(
  'InvoiceStatus',
  stringEnum(INVOICE_STATUSES, {
    description:
      'draft → sent (POST /send or initiate-payment) → viewed (payment page opened) → partial / paid (payments, or payments and credit notes covering the total); void: a draft voided, or an issued invoice whose credit notes cover its total with nothing paid (POST /void issues that credit note). Only a draft may be updated or deleted.',
  }),
);

export const InvoiceItemShape = component(
  'InvoiceItem',
  closed({
    id: Id,
    description: text(1000, 1),
    quantity: Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000, description: 'At most 4 decimals' }),
    unit_price: money({ description: 'Major units; may be negative (a discount line)' }),
    amount: money({ description: 'quantity × unit_price, rounded half away from zero to the minor unit; with an inclusive rate it includes the tax' }),
    amount_excluding_tax: money({ description: 'With an inclusive rate: amount × 100 / (100 + percentage), rounded; otherwise the amount' }),
    tax_rate_ids: Type.Array(Id, { maxItems: MAX_TAX_RATES_PER_LINE, description: "The rates that tax this line: its own, or the invoice's defaults" }),
  }),
);

export const TaxBreakdownLineShape = component(
  'TaxBreakdownLine',
  closed(
    {
      tax_rate_id: Id,
      display_name: Type.String({ description: 'As it was when the invoice was issued' }),
      category: TaxCategoryShape,
      percentage: Type.Number({ minimum: 0, maximum: 100 }),
      inclusive: Type.Boolean(),
      taxable_amount: money({ description: "Sum of its lines' amount_excluding_tax" }),
      tax_amount: money({ description: 'taxable_amount × percentage / 100, rounded once for the rate (or the sum of the lines\' tax_amounts)' }),
      exemption_reason: nullable(Type.String()),
    },
    { description: 'One rate of the invoice: as applied (an exempt buyer makes every rate E at 0 %, a reverse-charge buyer AE at 0 %)' },
  ),
);

/** Computed on every read, as PaymentStatusReport shows it too. */
const OverdueField = Type.Boolean({
  description:
    'True when the invoice awaits payment (sent, viewed or partial), amount_due is above 0 and its due_date has ended (UTC) by the clock of its business and mode (a test mode\'s frozen time where one is set). `invoice.overdue` fires once when it becomes so',
});

/** A payment reminder sent for the invoice (server/invoices/reminders.ts). */
export const ReminderSentShape = component(
  'ReminderSent',
  closed(
    {
      offset_days: Type.Integer({ description: 'Days from the due date (negative: before it): one of its business\'s reminder offsets' }),
      sent_at: dateTime,
    },
    { description: 'A reminder, dated 00:00 UTC of the day it was due (due_date + offset_days), by the clock of the business and mode, even when it went out later' },
  ),
);
export type ReminderSentView = Static<typeof ReminderSentShape>;

/** The fields every invoice carries: an Invoice is these, an InvoiceDetail adds its payments. */
const invoiceFields = {
  id: Id,
  number: nullable(Type.String({ pattern: '^INV-[0-9]{6,}$' }), { description: 'Per business and mode, assigned when the invoice leaves draft; null for drafts' }),
  client_id: Id,
  status: InvoiceStatusShape,
  currency: Currency,
  issue_date: date,
  due_date: Type.String({ format: 'date', description: 'Strictly after issue_date' }),
  items: Type.Array(InvoiceItemShape, { minItems: 1, maxItems: MAX_ITEMS }),
  subtotal: money({ description: 'Sum of the line amounts as entered' }),
  default_tax_rate_ids: Type.Array(Id, { maxItems: MAX_TAX_RATES_PER_LINE }),
  tax_exempt: TaxExemptShape,
  tax_breakdown: Type.Array(TaxBreakdownLineShape, { description: 'One entry per rate, by id' }),
  total_excluding_tax: money({ description: "Sum of the lines' amount_excluding_tax" }),
  total_tax: money(),
  rounding_amount: money({ description: "What keeps an inclusive invoice's total at the quoted prices, plus the caller's rounding_amount" }),
  total: money({ minimum: 0, description: 'total_excluding_tax + total_tax + rounding_amount (≥ 0)' }),
  amount_paid: money({ minimum: 0 }),
  amount_credited: money({ minimum: 0, description: "The sum of its credit notes' totals" }),
  amount_due: money({ minimum: 0, description: 'max(0, total − amount_paid − amount_credited)' }),
  overdue: OverdueField,
  reminders_sent: Type.Array(ReminderSentShape, {
    description:
      'The payment reminders sent, in order: one per offset of its business (`business update --reminders`), once, while it awaited payment. In live mode each is an e-mail to the client; test mode sends none, and they show here and in `invoice.reminder_sent` only',
  }),
  credit_note_ids: Type.Array(Id, { description: 'Its credit notes, oldest first' }),
  notes: nullable(Type.String({ maxLength: 5000 })),
  buyer_reference: nullable(Type.String({ maxLength: 255 })),
  purchase_order: nullable(Type.String({ maxLength: 255 })),
  seller: described(Seller, 'The business as it was when the invoice left draft; a draft shows its current values'),
  buyer: described(Buyer, 'The client as it was when the invoice left draft; a draft shows its current values'),
  metadata: MetadataShape,
  livemode: Type.Boolean(),
  sent_at: nullable(dateTime),
  viewed_at: nullable(dateTime),
  paid_at: nullable(dateTime),
  voided_at: nullable(dateTime),
  created_at: dateTime,
  updated_at: dateTime,
  payment_url: nullable(Type.String({ format: 'uri' }), {
    description:
      'The hosted page where the client pays (as Stripe\'s `hosted_invoice_url`); null on drafts. In live mode it offers Pay only for an amount the business\'s gateway can charge exactly (Stripe: ISK in whole krona, three-decimal currencies ending in 0), and says so otherwise',
  }),
};

export const InvoiceShape = component(
  'Invoice',
  closed(invoiceFields, {
    description: 'An invoice as lists return it. Responses about one invoice (and webhook events) are an InvoiceDetail, which adds `payments`.',
  }),
);
export type InvoiceView = Static<typeof InvoiceShape>;

export const InvoiceDetailShape = component(
  'InvoiceDetail',
  closed({ ...invoiceFields, payments: Type.Array(PaymentShape) }, { description: 'An invoice with its payment history (oldest first)' }),
);
/** A single invoice as every single-invoice response and event shows it: with its payment history. */
export type InvoiceDetail = Static<typeof InvoiceDetailShape>;

export const InvoiceList = listOf('InvoiceList', InvoiceShape);
export const InvoiceEnvelope = envelope('InvoiceEnvelope', 'invoice', InvoiceDetailShape);

export const PaymentStatusReport = component(
  'PaymentStatusReport',
  closed({ invoice_id: Id, status: InvoiceStatusShape, currency: Currency, total: money(), amount_paid: money(), amount_due: money(), overdue: OverdueField }),
);

export const PaymentLink = component(
  'PaymentLink',
  closed({ payment_url: Type.String({ format: 'uri', description: 'The client\'s payment page' }), invoice_id: Id }),
);

export const SentInvoiceShape = component(
  'SentInvoice',
  closed({
    invoice: InvoiceDetailShape,
    email: closed({
      to: Type.String({ description: 'The client\'s e-mail address' }),
      status: stringEnum(['sent', 'queued', 'suppressed'], {
        description:
          '`sent`: the first attempt, made after the change committed, was accepted by the SMTP server (or written to the outbox directory without SMTP_URL) within a few seconds; `queued`: it is still under way or failed, and is retried on the webhook schedule; `suppressed`: test key, no e-mail leaves',
      }),
    }),
  }),
);
export type SentInvoice = Static<typeof SentInvoiceShape>;

/** A payment just recorded (simulated, or received elsewhere) and its invoice after it. */
export const RecordedPaymentShape = component('RecordedPayment', closed({ payment: PaymentShape, invoice: InvoiceDetailShape }));
export type RecordedPayment = Static<typeof RecordedPaymentShape>;
