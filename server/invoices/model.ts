import { Knex } from 'knex';
import { StoredRow } from '../db/statement';
import { ChildModel, TenantModel } from '../db/tenant-model';
import { Metadata } from '../metadata/schema';
import { InvoiceStatus } from './status';

export { INVOICE_STATUSES, PAYABLE_STATUSES } from './status';
export type { InvoiceStatus } from './status';

export class Invoice extends TenantModel {
  static override tableName = 'invoices';
  static override timestampColumns = ['created_at', 'updated_at', 'sent_at', 'viewed_at', 'paid_at', 'voided_at'];
  static override jsonAttributes = ['metadata'];

  client_id!: number;
  /** `INV-000001`, assigned when the invoice leaves draft; null on drafts. */
  number!: string | null;
  status!: InvoiceStatus;
  currency!: string;
  issue_date!: string;
  due_date!: string;
  /** Minor units. */
  subtotal!: number;
  total!: number;
  amount_paid!: number;
  notes!: string | null;
  /** The unguessable part of the payment link. */
  payment_token!: string;
  sent_at!: string | null;
  viewed_at!: string | null;
  paid_at!: string | null;
  voided_at!: string | null;
  /** Null on invoices from before metadata existed. */
  metadata!: Metadata | null;
}

/** A line of an invoice; reached only through its (tenant-scoped) invoice. */
export class InvoiceItem extends ChildModel {
  static override tableName = 'invoice_items';
  static override timestampColumns: string[] = [];
  static override parentColumn = 'invoice_id';

  static ofInvoices(invoices: readonly Invoice[], conn: Knex) {
    return InvoiceItem.ofParents(invoices, conn);
  }

  /** Stores all the items of an invoice (a new one's, or a replacement set) and returns them in order. */
  static insertFor(invoice: Invoice, conn: Knex, rows: StoredRow[]): Promise<InvoiceItem[]> {
    return InvoiceItem.insertAllOf(invoice, conn, rows, 'position');
  }

  /** One invoice's items in order, by a statement written once (an invoice's response reads them). */
  static ofInvoice(invoice: Invoice, conn: Knex): Promise<InvoiceItem[]> {
    return InvoiceItem.allOf(invoice, conn, 'position');
  }

  invoice_id!: number;
  position!: number;
  description!: string;
  quantity_units!: number;
  unit_price!: number;
  amount!: number;

  // No timestamp columns on items: they live and die with their invoice.
  override $beforeInsert(): void {}
  override $beforeUpdate(): void {}
}
