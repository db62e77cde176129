/** A recurring invoice as the API shows it: amounts and quantities back in major units. Pure. */
import { fromQuantityUnits, toMajor } from '../money/amount';
import { RecurringInvoice } from './model';
import { RecurringInvoiceView } from './schema';

export function toRecurringInvoiceView(row: RecurringInvoice, invoiceIds: readonly number[]): RecurringInvoiceView {
  return {
    id: row.id,
    client_id: row.client_id,
    currency: row.currency,
    items: row.items.map((item) => ({
      description: item.description,
      quantity: fromQuantityUnits(item.quantity_units),
      unit_price: toMajor(item.unit_price, row.currency),
      tax_rate_ids: item.tax_rate_ids,
    })),
    default_tax_rate_ids: row.default_tax_rate_ids,
    interval: row.interval_unit,
    interval_count: row.interval_count,
    start_date: row.start_date,
    end_date: row.end_date ?? null,
    days_until_due: row.days_until_due,
    auto_send: row.auto_send,
    status: row.status,
    next_issue_date: row.next_issue_date ?? null,
    invoice_ids: [...invoiceIds],
    metadata: row.metadata ?? {},
    livemode: row.livemode,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
