import { TenantModel } from '../db/tenant-model';
import { Metadata } from '../metadata/schema';

export const PAYMENT_STATUSES = ['succeeded', 'pending', 'failed', 'refunded'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export class Payment extends TenantModel {
  static override tableName = 'payments';
  static override timestampColumns = ['created_at', 'updated_at', 'paid_at'];
  static override jsonAttributes = ['metadata'];

  invoice_id!: number;
  client_id!: number;
  /** Minor units. */
  amount!: number;
  /** Minor units refunded so far (reserved before a gateway is asked). */
  amount_refunded!: number;
  /** Minor units of `amount` that counted towards the invoice (less when a gateway took more than was due); null: all of it. */
  amount_applied!: number | null;
  currency!: string;
  status!: PaymentStatus;
  /** How the money came: `simulated` in test mode; gateway methods later. */
  method!: string;
  gateway!: string | null;
  gateway_reference!: string | null;
  /** A gateway's payment id, unique per gateway; null for references that may repeat. */
  unique_reference!: string | null;
  paid_at!: string | null;
  /** Null on payments from before metadata existed. */
  metadata!: Metadata | null;
}
