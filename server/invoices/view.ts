/** An invoice as the API and its events show it: amounts back in major units. Pure. */
import { Metadata } from '../metadata/schema';
import { fromQuantityUnits, toMajor } from '../money/amount';
import { PaymentView } from './payment-view';
import { InvoiceLinks } from './links';
import { Invoice, InvoiceItem, InvoiceStatus } from './model';

export interface InvoiceItemView {
  id: number;
  description: string;
  quantity: number;
  unit_price: number;
  amount: number;
}

export interface InvoiceView {
  id: number;
  number: string | null;
  client_id: number;
  status: InvoiceStatus;
  currency: string;
  issue_date: string;
  due_date: string;
  items: InvoiceItemView[];
  subtotal: number;
  total: number;
  amount_paid: number;
  amount_due: number;
  notes: string | null;
  metadata: Metadata;
  livemode: boolean;
  sent_at: string | null;
  viewed_at: string | null;
  paid_at: string | null;
  voided_at: string | null;
  created_at: string;
  updated_at: string;
  /** The hosted page where the client pays (as Stripe's `hosted_invoice_url`); null on drafts. */
  payment_url: string | null;
}

/** A single invoice as every single-invoice response and event shows it: with its payment history. */
export interface InvoiceDetail extends InvoiceView {
  payments: PaymentView[];
}

function toItemView(row: InvoiceItem, currency: string): InvoiceItemView {
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
