/** A business as the API (`GET /business`) and the CLI show it. Pure. */
import { Business } from './model';
import { BusinessView } from './schema';

export function toBusinessView(row: Business): BusinessView {
  return { id: row.id, name: row.name, currency: row.currency, country: row.country ?? null, plan: row.plan };
}
