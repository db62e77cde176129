/** Credit notes in and out: the request's lines (joi; what they may credit is checked by the service) and the response shapes. */
import { Static, Type } from '@sinclair/typebox';
import Joi from 'joi';
import { Seller } from '../businesses/schema';
import { Buyer, TaxExemptShape } from '../clients/schema';
import { idFilter, listQuery, ListParams } from '../http/pagination';
import { InvoiceDetailShape, MAX_ITEMS, recordIdField, TaxBreakdownLineShape, taxRateIdsField } from '../invoices/schema';
import { MetadataChanges, metadataField, MetadataShape } from '../metadata/schema';
import { MAX_QUANTITY, moneyField } from '../money/amount';
import { MAX_TAX_RATES_PER_LINE } from '../money/tax';
import { closed, Currency, dateTime, envelope, Id, listOf, money, text } from '../shapes/common';
import { component, described, nullable } from '../shapes/component';
import { optionalText } from '../validation';
import { CREDIT_NOTE_REASONS, CreditNoteReason } from './model';

/** A line of the invoice credited (all that is left of it, or `quantity` of it). */
export interface CopiedLineInput {
  invoice_item_id: number;
  quantity?: number;
}

/** A line of the credit note's own (a price reduction, a goodwill credit). */
export interface OwnLineInput {
  description: string;
  quantity: number;
  unit_price: number;
  tax_rate_ids?: number[];
}

export type CreditNoteLineInput = CopiedLineInput | OwnLineInput;

export interface CreditNoteInput {
  items: CreditNoteLineInput[];
  reason?: CreditNoteReason;
  memo?: string | null;
  refund?: boolean;
  metadata?: MetadataChanges;
}

export function isCopiedLine(line: CreditNoteLineInput): line is CopiedLineInput {
  return 'invoice_item_id' in line && line.invoice_item_id !== undefined;
}

/**
 * One object for both kinds of line, so a wrong one is refused field by field (`items.0.unit_price`
 * is required) rather than as "matches no alternative".
 */
const line = Joi.object({
  invoice_item_id: recordIdField.description("A line of the invoice to credit: its description, unit price and tax rates are copied"),
  quantity: Joi.number()
    .strict()
    .greater(0)
    .max(MAX_QUANTITY)
    .description('At most 4 decimals. For an invoice line: default, and at most, what earlier credit notes left of it; required for a line of its own'),
  description: Joi.string().trim().min(1).max(1000).description('A line of its own (with quantity and unit_price)'),
  unit_price: moneyField.description('Major units, as an invoice line\'s'),
  tax_rate_ids: taxRateIdsField.description("A line of its own's rates (active ones); none: untaxed"),
})
  .xor('invoice_item_id', 'description')
  .with('description', ['quantity', 'unit_price'])
  .without('invoice_item_id', ['description', 'unit_price', 'tax_rate_ids']);

export const createCreditNoteBody = Joi.object<CreditNoteInput>({
  items: Joi.array().items(line).min(1).max(MAX_ITEMS).required(),
  reason: Joi.string()
    .valid(...CREDIT_NOTE_REASONS)
    .description('Why, as Stripe\'s credit note reasons'),
  memo: optionalText(5000).description('Printed on the credit note'),
  refund: Joi.boolean().strict().description('true: what the credit note does not take off the amount due is refunded from the invoice\'s payments, newest first; default false: it is recorded as settled outside the service'),
  metadata: metadataField,
});

export interface CreditNoteListParams extends ListParams {
  invoice_id?: number;
  client_id?: number;
}

export const listCreditNotesQuery = listQuery<CreditNoteListParams>({
  invoice_id: idFilter('invoice_id'),
  client_id: idFilter('client_id'),
});

export const CreditNoteItemShape = component(
  'CreditNoteItem',
  closed({
    id: Id,
    invoice_item_id: nullable(Type.Integer({ minimum: 1 }), { description: 'The invoice line it credits; null for a line of its own' }),
    description: text(1000, 1),
    quantity: Type.Number({ exclusiveMinimum: 0, maximum: MAX_QUANTITY, description: 'At most 4 decimals' }),
    unit_price: money({ description: 'Major units, as on the invoice line it credits' }),
    amount: money({ description: 'quantity × unit_price, rounded half away from zero to the minor unit; with an inclusive rate it includes the tax' }),
    amount_excluding_tax: money(),
    tax_rate_ids: Type.Array(Id, { maxItems: MAX_TAX_RATES_PER_LINE, description: 'The rates that tax it (an invoice line\'s, as applied there)' }),
  }),
);

export const CreditNoteShape = component(
  'CreditNote',
  closed(
    {
      id: Id,
      number: Type.String({ pattern: '^CN-[0-9]{6,}$', description: 'Its own gapless sequence per business and mode' }),
      invoice_id: Id,
      client_id: Id,
      currency: Currency,
      reason: Type.Unsafe<CreditNoteReason | null>({ type: ['string', 'null'], enum: [...CREDIT_NOTE_REASONS, null] }),
      memo: nullable(Type.String({ maxLength: 5000 })),
      items: Type.Array(CreditNoteItemShape, { minItems: 1, maxItems: MAX_ITEMS }),
      subtotal: money({ description: 'Sum of the line amounts' }),
      total_excluding_tax: money(),
      tax_breakdown: Type.Array(TaxBreakdownLineShape, { description: "One entry per rate, under the invoice's tax rules and buyer" }),
      total_tax: money(),
      tax_exempt: TaxExemptShape,
      rounding_amount: money({ description: "An inclusive rate's rounding; a credit note that credits the rest of every line also takes what keeps it at the invoice's total" }),
      total: money({ exclusiveMinimum: 0, description: 'total_excluding_tax + total_tax + rounding_amount' }),
      amount_applied: money({ minimum: 0, description: "What it took off the invoice's amount due" }),
      amount_refunded: money({ minimum: 0, description: 'What it refunded from the invoice\'s payments (refund: true): see refund_ids for each refund\'s status' }),
      out_of_band_amount: money({ minimum: 0, description: 'What was settled outside the service (refund: false)' }),
      refund_ids: Type.Array(Id),
      seller: described(Seller, 'As the invoice names it'),
      buyer: described(Buyer, 'As the invoice names it'),
      metadata: MetadataShape,
      livemode: Type.Boolean(),
      created_at: dateTime,
    },
    { description: 'A numbered correction of an issued invoice: amount_applied + amount_refunded + out_of_band_amount = total' },
  ),
);
export type CreditNoteView = Static<typeof CreditNoteShape>;

export const CreditNoteResultShape = component('CreditNoteResult', closed({ credit_note: CreditNoteShape, invoice: InvoiceDetailShape }));
export type CreditNoteResult = Static<typeof CreditNoteResultShape>;

export const VoidedInvoiceShape = component(
  'VoidedInvoice',
  closed({
    invoice: InvoiceDetailShape,
    credit_note: Type.Union([CreditNoteShape, Type.Null()], { description: 'The credit note that cancelled an issued invoice; null for a voided draft' }),
  }),
);
export type VoidedInvoice = Static<typeof VoidedInvoiceShape>;

export const CreditNoteList = listOf('CreditNoteList', CreditNoteShape);
export const CreditNoteEnvelope = envelope('CreditNoteEnvelope', 'credit_note', CreditNoteShape);
