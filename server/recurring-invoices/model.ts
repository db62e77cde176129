import { TenantModel } from '../db/tenant-model';
import { Metadata } from '../metadata/schema';
import { Interval } from './calendar';

export const RECURRING_STATUSES = ['active', 'paused', 'ended'] as const;
export type RecurringStatus = (typeof RECURRING_STATUSES)[number];

/** A line each invoice of the schedule takes: the quantity in units of 1/10 000, the price in minor units. */
export interface ScheduleLine {
  description: string;
  quantity_units: number;
  unit_price: number;
  /** null: the schedule's default_tax_rate_ids apply. */
  tax_rate_ids: number[] | null;
}

/** A schedule that issues one invoice to its client on each of its dates. */
export class RecurringInvoice extends TenantModel {
  static override tableName = 'recurring_invoices';
  static override jsonAttributes = ['items', 'default_tax_rate_ids', 'metadata'];
  static override booleanColumns = ['livemode', 'auto_send'];

  client_id!: number;
  currency!: string;
  items!: ScheduleLine[];
  default_tax_rate_ids!: number[];
  /** `interval` is a reserved word in MySQL. */
  interval_unit!: Interval;
  interval_count!: number;
  start_date!: string;
  end_date!: string | null;
  days_until_due!: number;
  auto_send!: boolean;
  status!: RecurringStatus;
  /** The one date still to issue; null once ended. */
  next_issue_date!: string | null;
  metadata!: Metadata | null;
}
