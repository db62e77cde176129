import { TenantModel } from '../db/tenant-model';
import { Metadata } from '../metadata/schema';

export const REFUND_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type RefundStatus = (typeof REFUND_STATUSES)[number];

/** Money returned on a payment, in part or in full. */
export class Refund extends TenantModel {
  static override tableName = 'refunds';
  static override jsonAttributes = ['metadata'];
  static override timestampColumns = ['created_at', 'updated_at', 'next_attempt_at'];

  payment_id!: number;
  invoice_id!: number;
  /** Minor units. */
  amount!: number;
  currency!: string;
  reason!: string | null;
  /**
   * `pending` while its outcome at the gateway is not known (being asked, or the answer was lost);
   * `failed` when the gateway refused it or the bank failed it later (nothing was returned).
   */
  status!: RefundStatus;
  /** The payment's gateway (`stripe`, `external`, `test`). */
  gateway!: string;
  /** The gateway's refund id. */
  gateway_reference!: string | null;
  /** A refund made in the gateway's own dashboard, recorded once. */
  unique_reference!: string | null;
  failure_reason!: string | null;
  /** The credential's subject and Idempotency-Key of the request that asked for it (while it has not failed). */
  request_key!: string | null;
  /** The credit note that made it; null for a refund asked for on its own. */
  credit_note_id!: number | null;
  metadata!: Metadata | null;
  /** Reconciliation of a pending refund (a leased job row: see jobs/lease.ts): rounds claimed so far. */
  attempts!: number;
  /** When a pending refund is next read back from its gateway; null once it is settled. */
  next_attempt_at!: string | null;
  lease_id!: string | null;
}
