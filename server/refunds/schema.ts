/** Refund input: the refund request's body and the list's filters. */
import Joi from 'joi';
import { idFilter, listQuery, ListParams } from '../http/pagination';
import { MetadataChanges, metadataField } from '../metadata/schema';
import { moneyField } from '../money/amount';
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
