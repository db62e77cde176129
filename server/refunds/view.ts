/** A refund as the API shows it: amounts back in major units. Pure. */
import { toMajor } from '../money/amount';
import { Refund } from './model';
import { RefundView } from './schema';

export function toRefundView(row: Refund): RefundView {
  return {
    id: row.id,
    payment_id: row.payment_id,
    invoice_id: row.invoice_id,
    amount: toMajor(row.amount, row.currency),
    currency: row.currency,
    reason: row.reason ?? null,
    status: row.status,
    failure_reason: row.failure_reason ?? null,
    gateway_reference: row.gateway_reference ?? null,
    credit_note_id: row.credit_note_id ?? null,
    metadata: row.metadata ?? {},
    livemode: row.livemode,
    created_at: row.created_at,
  };
}
