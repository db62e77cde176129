/** Payments in and out: the list filters (joi) and the response shapes (the payment's own is in invoices/payment-schema.ts). */
import Joi from 'joi';
import { idFilter, listQuery, ListParams } from '../http/pagination';
import { PAYMENT_STATUSES, PaymentStatus } from '../invoices/payment-model';
import { PaymentShape } from '../invoices/payment-schema';
import { MetadataFilter, withMetadataFilter } from '../metadata/schema';
import { envelope, listOf } from '../shapes/common';

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
