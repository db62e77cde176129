/** An invoice as the API and its events show it: amounts back in major units. Pure. */
import { Static } from '@sinclair/typebox';
import { fromQuantityUnits, toMajor } from '../money/amount';
import { InvoiceLinks } from './links';
import { Invoice, InvoiceItem } from './model';
import { InvoiceItemShape, InvoiceView } from './schema';

function toItemView(row: InvoiceItem, currency: string): Static<typeof InvoiceItemShape> {
  return {
    id: row.id,
    description: row.description,
    quantity: fromQuantityUnits(row.quantity_units),
    unit_price: toMajor(row.unit_price, currency),
    amount: toMajor(row.amount, currency),
  };
}

export function toInvoiceView(row: Invoice, items: InvoiceItem[], links: InvoiceLinks): InvoiceView {
  const money = (minor: number) => toMajor(minor, row.currency);
  return {
    id: row.id,
    number: row.number ?? null,
    client_id: row.client_id,
    status: row.status,
    currency: row.currency,
    issue_date: row.issue_date,
    due_date: row.due_date,
    items: items.map((item) => toItemView(item, row.currency)),
    subtotal: money(row.subtotal),
    total: money(row.total),
    amount_paid: money(row.amount_paid),
    amount_due: money(row.total - row.amount_paid),
    notes: row.notes ?? null,
    metadata: row.metadata ?? {},
    livemode: row.livemode,
    sent_at: row.sent_at ?? null,
    viewed_at: row.viewed_at ?? null,
    paid_at: row.paid_at ?? null,
    voided_at: row.voided_at ?? null,
    created_at: row.created_at,
    updated_at: row.updated_at,
    payment_url: row.status === 'draft' ? null : links.paymentUrl(row.payment_token),
  };
}
