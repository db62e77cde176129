/** A credit note as the API and its event show it: amounts back in major units. Pure. */
import { fromQuantityUnits, toMajor } from '../money/amount';
import { toBreakdownView } from '../invoices/view';
import { CreditNote, CreditNoteItem } from './model';
import { CreditNoteView } from './schema';

export function toCreditNoteView(row: CreditNote, items: readonly CreditNoteItem[], refundIds: readonly number[]): CreditNoteView {
  const money = (minor: number) => toMajor(minor, row.currency);
  return {
    id: row.id,
    number: row.number,
    invoice_id: row.invoice_id,
    client_id: row.client_id,
    currency: row.currency,
    reason: row.reason ?? null,
    memo: row.memo ?? null,
    items: items.map((item) => ({
      id: item.id,
      invoice_item_id: item.invoice_item_id ?? null,
      description: item.description,
      quantity: fromQuantityUnits(item.quantity_units),
      unit_price: money(item.unit_price),
      amount: money(item.amount),
      amount_excluding_tax: money(item.amount_excluding_tax),
      tax_rate_ids: item.tax_rate_ids,
    })),
    subtotal: money(row.subtotal),
    total_excluding_tax: money(row.total_excluding_tax),
    tax_breakdown: row.tax_breakdown.map((line) => toBreakdownView(line, row.currency)),
    total_tax: money(row.total_tax),
    tax_exempt: row.tax_exempt,
    rounding_amount: money(row.rounding_amount),
    total: money(row.total),
    amount_applied: money(row.amount_applied),
    amount_refunded: money(row.amount_refunded),
    out_of_band_amount: money(row.out_of_band_amount),
    refund_ids: [...refundIds],
    seller: row.seller,
    buyer: row.buyer,
    metadata: row.metadata ?? {},
    livemode: row.livemode,
    created_at: row.created_at,
  };
}
