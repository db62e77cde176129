import { Knex } from 'knex';
import { QueryBuilder } from 'objection';
import { Actor } from '../auth/actor';
import { selectRows, StoredRow } from '../db/statement';
import { ChildModel, TenantModel } from '../db/tenant-model';
import { Metadata } from '../metadata/schema';
import { TaxBreakdownLine, TaxExempt } from '../money/tax';
import { BuyerSnapshot } from '../clients/view';
import { SellerSnapshot } from '../businesses/view';
import { InvoiceStatus, OWING_SQL } from './status';


export { amountDue, INVOICE_STATUSES, PAYABLE_STATUSES, statusFromMoney } from './status';
export type { InvoiceStatus } from './status';

export class Invoice extends TenantModel {
  static override tableName = 'invoices';
  static override timestampColumns = ['created_at', 'updated_at', 'sent_at', 'viewed_at', 'paid_at', 'voided_at', 'overdue_notified_at'];
  static override jsonAttributes = ['metadata', 'default_tax_rate_ids', 'tax_breakdown', 'seller', 'buyer', 'credit_note_ids'];

  client_id!: number;
  /** `INV-000001`, assigned when the invoice leaves draft; null on drafts. */
  number!: string | null;
  status!: InvoiceStatus;
  currency!: string;
  issue_date!: string;
  due_date!: string;
  /** Minor units. `subtotal`: the line amounts as entered; `total` = total_excluding_tax + total_tax + rounding_amount. */
  subtotal!: number;
  total_excluding_tax!: number;
  total_tax!: number;
  /** The computed rounding of inclusive rates plus `caller_rounding_amount`. */
  rounding_amount!: number;
  caller_rounding_amount!: number;
  total!: number;
  amount_paid!: number;
  /** The sum of its credit notes' totals, and their ids oldest first (null: none yet). */
  amount_credited!: number;
  credit_note_ids!: number[] | null;
  /** The buyer's tax status the totals were computed with; `requested_tax_exempt` is the caller's override (null: the client's). */
  tax_exempt!: TaxExempt;
  requested_tax_exempt!: TaxExempt | null;
  /** Applied to items that give no `tax_rate_ids`; null on invoices from before taxes. */
  default_tax_rate_ids!: number[] | null;
  /** As the engine computed it (percentages in integer units, rate names as they were), so an issued invoice keeps them; null on invoices from before taxes. */
  tax_breakdown!: TaxBreakdownLine[] | null;
  buyer_reference!: string | null;
  purchase_order!: string | null;
  /** Both parties as they were when the invoice left draft; null on drafts. */
  seller!: SellerSnapshot | null;
  buyer!: BuyerSnapshot | null;
  notes!: string | null;
  /** The unguessable part of the payment link. */
  payment_token!: string;
  sent_at!: string | null;
  viewed_at!: string | null;
  paid_at!: string | null;
  voided_at!: string | null;
  /** When `invoice.overdue` was recorded for it, dated at the moment it became overdue (server/invoices/overdue.ts); null: not yet. */
  overdue_notified_at!: string | null;
  /** Null on invoices from before metadata existed. */
  metadata!: Metadata | null;
  /** The recurring schedule that issued it, if one did (unique with issue_date). */
  recurring_invoice_id!: number | null;
}

/** `awaitsPayment` (status.ts) as a condition of a query over `invoices`. */
export function whereAwaitsPayment<M extends TenantModel>(query: QueryBuilder<M, M[]>): QueryBuilder<M, M[]> {
  return query.whereRaw(OWING_SQL);
}

/** A line of an invoice; reached only through its (tenant-scoped) invoice. */
export class InvoiceItem extends ChildModel {
  static override tableName = 'invoice_items';
  static override timestampColumns: string[] = [];
  static override parentColumn = 'invoice_id';
  static override jsonAttributes = ['tax_rate_ids', 'tax_amounts'];

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
  amount_excluding_tax!: number;
  /** The ids the item gave; null: it gave none, and the invoice's default_tax_rate_ids apply. */
  tax_rate_ids!: number[] | null;
  /** Tax computed elsewhere, in minor units; null when none was given. */
  tax_amounts!: { tax_rate_id: number; amount: number }[] | null;

  // No timestamp columns on items: they live and die with their invoice.
  override $beforeInsert(): void {}
  override $beforeUpdate(): void {}
}

/**
 * A payment reminder sent for an invoice: one per invoice and offset (a unique key), written by the
 * reminder sweep (reminders.ts) with its event; `sent_at` is 00:00 UTC of the day it was due.
 */
export class InvoiceReminder extends TenantModel {
  static override tableName = 'invoice_reminders';
  static override timestampColumns = ['sent_at'];

  invoice_id!: number;
  offset_days!: number;
  sent_at!: string;

  /**
   * The reminders of these invoices (the actor's, read through a tenant gate), by invoice id, in the
   * order they were sent: one statement for a page. A draft has none (only an issued invoice is
   * reminded), so a draft's read asks nothing.
   */
  static async ofInvoices(actor: Actor, invoices: readonly Invoice[], conn: Knex): Promise<Map<number, InvoiceReminder[]>> {
    const byInvoice = new Map<number, InvoiceReminder[]>();
    const ids = invoices.filter((invoice) => invoice.status !== 'draft').map((invoice) => invoice.id);
    if (!ids.length) return byInvoice;
    const sql = `select * from invoice_reminders where business_id = ? and livemode = ? and invoice_id in (${ids.map(() => '?').join(', ')}) order by sent_at, offset_days`;
    const rows = await selectRows(conn, sql, [actor.businessId, actor.livemode ? 1 : 0, ...ids]);
    for (const stored of rows) {
      const row = InvoiceReminder.fromDatabaseJson(stored);
      byInvoice.set(row.invoice_id, [...(byInvoice.get(row.invoice_id) ?? []), row]);
    }
    return byInvoice;
  }
}
