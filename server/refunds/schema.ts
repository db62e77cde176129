/** Refunds in and out: the refund request's body and the list's filters (joi), and the response shapes. */
import { Static, Type } from '@sinclair/typebox';
import Joi from 'joi';
import { idFilter, listQuery, ListParams } from '../http/pagination';
import { PaymentShape } from '../payments/schema';
import { InvoiceDetailShape } from '../invoices/schema';
import { MetadataChanges, metadataField, MetadataShape } from '../metadata/schema';
import { moneyField } from '../money/amount';
import { closed, Currency, dateTime, envelope, Id, listOf, money } from '../shapes/common';
import { component, nullable, stringEnum } from '../shapes/component';
import { REFUND_STATUSES, RefundStatus } from './model';

export interface RefundInput {
  amount?: number;
  reason?: string | null;
  metadata?: MetadataChanges;
}

export const refundBody = Joi.object<RefundInput>({
  amount: moneyField.greater(0).description('Major units; default: what is left of the payment'),
  reason: Joi.string().trim().max(500).allow(null, '').description('Why; `duplicate`, `fraudulent` and `requested_by_customer` are passed to Stripe as its reason'),
  metadata: metadataField,
});

export interface RefundListParams extends ListParams {
  payment_id?: number;
  invoice_id?: number;
  status?: RefundStatus;
}

export const listRefundsQuery = listQuery<RefundListParams>({
  payment_id: idFilter('payment_id'),
  invoice_id: idFilter('invoice_id'),
  status: Joi.string()
    .valid(...REFUND_STATUSES)
    .description('Only refunds in this status (`pending`: its outcome at the gateway is not known yet); an unknown value is a 400'),
});

export const RefundShape = component(
  'Refund',
  closed({
    id: Id,
    payment_id: Id,
    invoice_id: Id,
    amount: money({ exclusiveMinimum: 0 }),
    currency: Currency,
    reason: nullable(Type.String({ maxLength: 500 })),
    status: stringEnum(REFUND_STATUSES, {
      description:
        '`pending` while its outcome at the gateway is not known (asked, or the answer was lost: a retry, the gateway\'s events or the reconciliation sweep settle it); `succeeded` when made; `failed` when refused, or failed later at the bank (the amount then counts as paid again)',
    }),
    failure_reason: nullable(Type.String({ maxLength: 500 }), { description: 'Why a `failed` refund returned nothing; null otherwise' }),
    gateway_reference: nullable(Type.String(), { description: 'The gateway\'s refund id (Stripe `re_…`); null for a recorded refund' }),
    credit_note_id: nullable(Type.Integer({ minimum: 1 }), { description: 'The credit note that made it (`refund: true`); null for a refund asked for on its own' }),
    metadata: MetadataShape,
    livemode: Type.Boolean(),
    created_at: dateTime,
  }),
);
export type RefundView = Static<typeof RefundShape>;

/** A refund just made, with the payment and the invoice after it. */
export const RefundResultShape = component('RefundResult', closed({ refund: RefundShape, payment: PaymentShape, invoice: InvoiceDetailShape }));
export type RefundResult = Static<typeof RefundResultShape>;

export const RefundList = listOf('RefundList', RefundShape);
export const RefundEnvelope = envelope('RefundEnvelope', 'refund', RefundShape);
