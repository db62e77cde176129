import { TenantModel } from '../db/tenant-model';
import { Metadata } from '../metadata/schema';
import { TaxCategory } from '../money/tax';

/** A business's named tax percentage: its percentage, category and `inclusive` never change once made. */
export class TaxRate extends TenantModel {
  static override tableName = 'tax_rates';
  static override jsonAttributes = ['metadata'];
  static override booleanColumns = ['livemode', 'inclusive', 'active'];

  display_name!: string;
  /** Ten-thousandths of a percent: 19 % is 190000 (money/tax.ts converts). */
  percentage_units!: number;
  inclusive!: boolean;
  category!: TaxCategory;
  /** ISO 3166-1 alpha-2, or null. */
  country!: string | null;
  description!: string | null;
  exemption_reason!: string | null;
  /** An archived rate (false) cannot go on new invoice lines. */
  active!: boolean;
  metadata!: Metadata | null;
}
