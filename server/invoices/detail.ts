/** Reads what an invoice response shows besides its row: its items, its payments and, for a draft, its parties. */
import { Knex } from 'knex';
import { Actor } from '../auth/actor';
import { Business } from '../businesses/model';
import { toSellerSnapshot } from '../businesses/view';
import { Client } from '../clients/model';
import { toBuyerSnapshot } from '../clients/view';
import { Payment } from '../payments/model';
import { PaymentView } from '../payments/schema';
import { toPaymentView } from '../payments/view';
import { InvoiceLinks } from './links';
import { Invoice, InvoiceItem, InvoiceReminder } from './model';
import { InvoiceDetail } from './schema';
import { InvoiceParties, toInvoiceView } from './view';

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

/**
 * Who each invoice is from and to (by invoice id): the snapshot an issued invoice took, and for a
 * draft, which has none, its business and client as they are now. `known` spares the reads of a
 * business or client the caller holds.
 */
export async function partiesOf(
  actor: Actor,
  invoices: readonly Invoice[],
  conn: Knex,
  known: { business?: Business; clients?: readonly Client[] } = {},
): Promise<Map<number, InvoiceParties>> {
  const parties = new Map<number, InvoiceParties>();
  const drafts = invoices.filter((row) => !row.seller || !row.buyer);
  for (const row of invoices) if (row.seller && row.buyer) parties.set(row.id, { seller: row.seller, buyer: row.buyer });
  if (!drafts.length) return parties;
  const clients = new Map((known.clients ?? []).map((client) => [client.id, client]));
  const missing = [...new Set(drafts.map((row) => row.client_id))].filter((id) => !clients.has(id));
  const [business, read] = await Promise.all([
    known.business ?? Business.findById(conn, actor.businessId),
    missing.length === 1 ? Client.findOwn(actor, conn, missing[0]).then((client) => (client ? [client] : [])) : missing.length ? Client.of(actor, conn).whereIn('clients.id', missing) : [],
  ]);
  for (const client of read) clients.set(client.id, client);
  for (const row of drafts) {
    const client = clients.get(row.client_id);
    if (!business || !client) throw new Error(`invoice ${row.id}: its business or client is gone`);
    parties.set(row.id, { seller: toSellerSnapshot(business), buyer: toBuyerSnapshot(client) });
  }
  return parties;
}

/** What the caller of `invoiceDetail` has just written or read, so its read is spared (a new invoice has no payments and no reminders; items just stored). */
export interface KnownOfInvoice {
  payments?: PaymentView[];
  items?: InvoiceItem[];
  reminders?: InvoiceReminder[];
  business?: Business;
  clients?: readonly Client[];
  /** Who it is from and to, as `partiesOf` read them. */
  parties?: InvoiceParties;
}

export async function invoiceDetail(actor: Actor, row: Invoice, conn: Knex, links: InvoiceLinks, known: KnownOfInvoice = {}): Promise<InvoiceDetail> {
  const [items, payments, parties, reminders] = await Promise.all([
    known.items ?? InvoiceItem.ofInvoice(row, conn),
    known.payments ?? paymentsOf(actor, row, conn),
    known.parties ?? partiesOf(actor, [row], conn, known).then((byInvoice) => byInvoice.get(row.id)!),
    known.reminders ?? InvoiceReminder.ofInvoices(actor, [row], conn).then((byInvoice) => byInvoice.get(row.id) ?? []),
  ]);
  return { ...toInvoiceView(row, items, links, parties, reminders), payments };
}
