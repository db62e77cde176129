/** Reads what an invoice response shows besides its row: its items and its payments, through the invoice. */
import { Knex } from 'knex';
import { Actor } from '../auth/actor';
import { Payment } from '../payments/model';
import { PaymentView } from '../payments/schema';
import { toPaymentView } from '../payments/view';
import { InvoiceLinks } from './links';
import { Invoice, InvoiceItem } from './model';
import { InvoiceDetail } from './schema';
import { toInvoiceView } from './view';

/** The items of each invoice, in order. */
export async function itemsOf(invoices: readonly Invoice[], conn: Knex): Promise<Map<number, InvoiceItem[]>> {
  const byInvoice = new Map<number, InvoiceItem[]>();
  if (!invoices.length) return byInvoice;
  const rows = await InvoiceItem.ofInvoices(invoices, conn).orderBy(['invoice_id', 'position']);
  for (const item of rows) byInvoice.set(item.invoice_id, [...(byInvoice.get(item.invoice_id) ?? []), item]);
  return byInvoice;
}

/** The payment rows of one invoice, oldest first. */
export async function paymentRowsOf(actor: Actor, invoice: Invoice, conn: Knex): Promise<Payment[]> {
  return await Payment.of(actor, conn).where('payments.invoice_id', invoice.id).orderBy('payments.id');
}

/** The payment history of one invoice, oldest first. */
export async function paymentsOf(actor: Actor, invoice: Invoice, conn: Knex): Promise<PaymentView[]> {
  return (await paymentRowsOf(actor, invoice, conn)).map(toPaymentView);
}

/** `known`: what the caller has just written (a new invoice has no payments; items just stored), so its read is spared. */
export async function invoiceDetail(
  actor: Actor,
  row: Invoice,
  conn: Knex,
  links: InvoiceLinks,
  known: { payments?: PaymentView[]; items?: InvoiceItem[] } = {},
): Promise<InvoiceDetail> {
  const [items, payments] = await Promise.all([known.items ?? InvoiceItem.ofInvoice(row, conn), known.payments ?? paymentsOf(actor, row, conn)]);
  return { ...toInvoiceView(row, items, links), payments };
}
