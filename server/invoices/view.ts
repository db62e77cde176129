/** An invoice as the API and its events show it: amounts back in major units. Pure. */
import { Static } from '@sinclair/typebox';
import { fromQuantityUnits, toMajor } from '../money/amount';
import { fromPercentageUnits, TaxBreakdownLine } from '../money/tax';
import { SellerSnapshot } from '../businesses/view';
import { BuyerSnapshot } from '../clients/view';
import { InvoiceLinks } from './links';
import { Invoice, InvoiceItem, InvoiceReminder } from './model';
import { InvoiceItemShape, InvoiceView, ReminderSentView, TaxBreakdownLineShape } from './schema';
import { todayUtc } from '../clock';
import { amountDue, isOverdue } from './status';

type TaxBreakdownLineView = Static<typeof TaxBreakdownLineShape>;

function toItemView(row: InvoiceItem, invoice: Invoice): Static<typeof InvoiceItemShape> {
  return {
    id: row.id,
    description: row.description,
    quantity: fromQuantityUnits(row.quantity_units),
    unit_price: toMajor(row.unit_price, invoice.currency),
    amount: toMajor(row.amount, invoice.currency),
    amount_excluding_tax: toMajor(row.amount_excluding_tax, invoice.currency),
    tax_rate_ids: row.tax_rate_ids ?? invoice.default_tax_rate_ids ?? [],
  };
}

/** One rate of a tax breakdown (an invoice's or a credit note's), in major units. */
export function toBreakdownView(line: TaxBreakdownLine, currency: string): TaxBreakdownLineView {
  return {
    tax_rate_id: line.tax_rate_id,
    display_name: line.display_name,
    category: line.category,
    percentage: fromPercentageUnits(line.percentage_units),
    inclusive: line.inclusive,
    taxable_amount: toMajor(line.taxable_amount, currency),
    tax_amount: toMajor(line.tax_amount, currency),
    exemption_reason: line.exemption_reason,
  };
}

/** Who the invoice is from and to: its snapshot once issued, the current values while a draft. */
export interface InvoiceParties {
  seller: SellerSnapshot;
  buyer: BuyerSnapshot;
}

export function toReminderSentView(row: Pick<InvoiceReminder, 'offset_days' | 'sent_at'>): ReminderSentView {
  return { offset_days: row.offset_days, sent_at: row.sent_at };
}

/**
 * An invoice as lists, single-invoice responses and events show it. `overdue` is judged on the
 * business clock of the context (the request's credential, or the sweep acting for the invoice's
 * business and mode).
 */
export function toInvoiceView(
  row: Invoice,
  items: InvoiceItem[],
  links: InvoiceLinks,
  parties: InvoiceParties,
  reminders: readonly Pick<InvoiceReminder, 'offset_days' | 'sent_at'>[],
): InvoiceView {
  const money = (minor: number) => toMajor(minor, row.currency);
  return {
    id: row.id,
    number: row.number ?? null,
    client_id: row.client_id,
    status: row.status,
    currency: row.currency,
    issue_date: row.issue_date,
    due_date: row.due_date,
    items: items.map((item) => toItemView(item, row)),
    subtotal: money(row.subtotal),
    default_tax_rate_ids: row.default_tax_rate_ids ?? [],
    tax_exempt: row.tax_exempt,
    tax_breakdown: (row.tax_breakdown ?? []).map((line) => toBreakdownView(line, row.currency)),
    total_excluding_tax: money(row.total_excluding_tax),
    total_tax: money(row.total_tax),
    rounding_amount: money(row.rounding_amount),
    total: money(row.total),
    amount_paid: money(row.amount_paid),
    amount_credited: money(row.amount_credited),
    amount_due: money(amountDue(row)),
    overdue: isOverdue(row, todayUtc()),
    reminders_sent: reminders.map(toReminderSentView),
    credit_note_ids: row.credit_note_ids ?? [],
    notes: row.notes ?? null,
    buyer_reference: row.buyer_reference ?? null,
    purchase_order: row.purchase_order ?? null,
    seller: row.seller ?? parties.seller,
    buyer: row.buyer ?? parties.buyer,
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
