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
}
