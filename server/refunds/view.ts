/** A refund as the API shows it: amounts back in major units. Pure. */
import { Metadata } from '../metadata/schema';
import { toMajor } from '../money/amount';
import { Refund, RefundStatus } from './model';

export interface RefundView {
  id: number;
  payment_id: number;
  invoice_id: number;
  amount: number;
  currency: string;
  reason: string | null;
  status: RefundStatus;
  /** Why a failed refund returned nothing (the gateway's refusal, or the bank's failure); null otherwise. */
  failure_reason: string | null;
  gateway_reference: string | null;
  metadata: Metadata;
  livemode: boolean;
  created_at: string;
}

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
    metadata: row.metadata ?? {},
    livemode: row.livemode,
    created_at: row.created_at,
  };
}
