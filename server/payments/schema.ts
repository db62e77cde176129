/** Payments in and out: the list filters (joi) and the response shapes. */
import { Static, Type } from '@sinclair/typebox';
import Joi from 'joi';
import { idFilter, listQuery, ListParams } from '../http/pagination';
import { MetadataFilter, MetadataShape, withMetadataFilter } from '../metadata/schema';
import { closed, Currency, dateTime, envelope, Id, listOf, money } from '../shapes/common';
import { component, nullable, stringEnum } from '../shapes/component';
import { PAYMENT_STATUSES, PaymentStatus } from './model';

export const PaymentStatusShape = component('PaymentStatus', stringEnum(PAYMENT_STATUSES));

export const PaymentShape = component(
  'Payment',
  closed({
    id: Id,
    invoice_id: Id,
    client_id: Id,
    amount: money(),
    amount_refunded: money({ minimum: 0, description: 'Refunded so far; the status is `refunded` once it equals `amount`' }),
    currency: Currency,
    status: PaymentStatusShape,
    method: Type.String({ description: '`simulated` (test mode), `card` (a gateway), or for a payment received elsewhere `bank_transfer`, `cash`, `card`, `check`, `other`' }),
    gateway: nullable(Type.String(), { description: '`test`, `stripe`, or `external` (received elsewhere)' }),
    gateway_reference: nullable(Type.String()),
    metadata: MetadataShape,
    livemode: Type.Boolean(),
    paid_at: nullable(dateTime),
    created_at: dateTime,
  }),
);
export type PaymentView = Static<typeof PaymentShape>;

export interface PaymentListParams extends ListParams, MetadataFilter {
  status?: PaymentStatus;
  invoice_id?: number;
}

export const listPaymentsQuery = withMetadataFilter(
  listQuery<PaymentListParams>({
    status: Joi.string()
      .valid(...PAYMENT_STATUSES)
      .description('Only payments in this status; an unknown value is a 400'),
    invoice_id: idFilter('invoice_id'),
  }),
);

export const PaymentList = listOf('PaymentList', PaymentShape);
export const PaymentEnvelope = envelope('PaymentEnvelope', 'payment', PaymentShape);
