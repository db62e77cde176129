/** A tax rate as the API shows it (the percentage back as a number), and as invoice pricing takes it. Pure. */
import { fromPercentageUnits, TaxRateTerms } from '../money/tax';
import { TaxRate } from './model';
import { TaxRateView } from './schema';

export function toTaxRateView(row: TaxRate): TaxRateView {
  return {
    id: row.id,
    display_name: row.display_name,
    percentage: fromPercentageUnits(Number(row.percentage_units)),
    inclusive: row.inclusive,
    category: row.category,
    country: row.country ?? null,
    description: row.description ?? null,
    exemption_reason: row.exemption_reason ?? null,
    active: row.active,
    metadata: row.metadata ?? {},
    livemode: row.livemode,
    created_at: row.created_at,
  };
}

export function toTaxRateTerms(row: TaxRate): TaxRateTerms {
  return {
    id: row.id,
    display_name: row.display_name,
    percentage_units: Number(row.percentage_units),
    inclusive: row.inclusive,
    category: row.category,
    exemption_reason: row.exemption_reason ?? null,
  };
}
