import { TenantModel } from '../db/tenant-model';

export class Expense extends TenantModel {
  static override tableName = 'expenses';

  /** Minor units of `currency`. */
  amount!: number;
  currency!: string;
  category!: string;
  description!: string | null;
  vendor!: string | null;
  /** A calendar date, `YYYY-MM-DD`. */
  date!: string;
  notes!: string | null;
  /** Minor units of `currency`: the tax of an expense imported from an e-invoice (BT-110). */
  tax_amount!: number | null;
  /** An imported e-invoice's seller VAT identifier (BT-31) and number (BT-1). */
  vendor_tax_id!: string | null;
  document_number!: string | null;
  /** An imported e-invoice's identity, unique per business and mode (import.ts's documentKey). */
  document_key!: string | null;
}
