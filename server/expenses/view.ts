/** An expense as the API shows it: the amount back in major units. Pure. */
import { toMajor } from '../money/amount';
import { Expense } from './model';
import { ExpenseView } from './schema';

export function toExpenseView(row: Expense): ExpenseView {
  return {
    id: row.id,
    amount: toMajor(Number(row.amount), row.currency),
    currency: row.currency,
    category: row.category,
    description: row.description ?? null,
    vendor: row.vendor ?? null,
    date: row.date,
    notes: row.notes ?? null,
    tax_amount: row.tax_amount === null || row.tax_amount === undefined ? null : toMajor(Number(row.tax_amount), row.currency),
    vendor_tax_id: row.vendor_tax_id ?? null,
    document_number: row.document_number ?? null,
    livemode: row.livemode,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
