import { Knex } from 'knex';
import { SellerSnapshot } from '../businesses/view';
import { BuyerSnapshot } from '../clients/view';
import { StoredRow } from '../db/statement';
import { ChildModel, TenantModel } from '../db/tenant-model';
import { Metadata } from '../metadata/schema';
import { TaxBreakdownLine, TaxExempt } from '../money/tax';

export const CREDIT_NOTE_REASONS = ['duplicate', 'fraudulent', 'order_change', 'product_unsatisfactory', 'other'] as const;
export type CreditNoteReason = (typeof CREDIT_NOTE_REASONS)[number];

/** A numbered correction of an issued invoice: what it credits, and how that was settled. */
export class CreditNote extends TenantModel {
  static override tableName = 'credit_notes';
  static override jsonAttributes = ['metadata', 'tax_breakdown', 'seller', 'buyer'];

  /** `CN-000001`: its own gapless sequence per business and mode. */
  number!: string;
  invoice_id!: number;
  client_id!: number;
  currency!: string;
  reason!: CreditNoteReason | null;
  memo!: string | null;
  /** Minor units, as an invoice's: total = total_excluding_tax + total_tax + rounding_amount. */
  subtotal!: number;
  total_excluding_tax!: number;
  total_tax!: number;
  rounding_amount!: number;
  total!: number;
  /** What it took off the invoice's amount due; the rest was refunded or settled outside the service. */
  amount_applied!: number;
  amount_refunded!: number;
  out_of_band_amount!: number;
  /** The invoice's buyer tax status, which its lines were taxed with. */
  tax_exempt!: TaxExempt;
  tax_breakdown!: TaxBreakdownLine[];
  /** The invoice's parties (its snapshot). */
  seller!: SellerSnapshot;
  buyer!: BuyerSnapshot;
  metadata!: Metadata | null;
}

/** A line of a credit note; reached only through its (tenant-scoped) credit note. */
export class CreditNoteItem extends ChildModel {
  static override tableName = 'credit_note_items';
  static override timestampColumns: string[] = [];
  static override parentColumn = 'credit_note_id';
  static override jsonAttributes = ['tax_rate_ids', 'tax_amounts'];

  static ofCreditNotes(notes: readonly CreditNote[], conn: Knex) {
    return CreditNoteItem.ofParents(notes, conn);
  }

  static insertFor(note: CreditNote, conn: Knex, rows: StoredRow[]): Promise<CreditNoteItem[]> {
    return CreditNoteItem.insertAllOf(note, conn, rows, 'position');
  }

  credit_note_id!: number;
  position!: number;
  /** The invoice line it credits; null for a line of its own. */
  invoice_item_id!: number | null;
  description!: string;
  quantity_units!: number;
  unit_price!: number;
  amount!: number;
  amount_excluding_tax!: number;
  /** The rates that taxed it (an invoice line's own or the invoice's defaults, as applied). */
  tax_rate_ids!: number[];
  tax_amounts!: { tax_rate_id: number; amount: number }[] | null;

  override $beforeInsert(): void {}
  override $beforeUpdate(): void {}
}
