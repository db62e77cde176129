import { nextUtcMidnight, utcMidnight } from '../clock';

/** Invoice statuses, apart from the model so that code without a database (a PDF thread) can use them. */
export const INVOICE_STATUSES = ['draft', 'sent', 'viewed', 'partial', 'paid', 'void'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

/** The statuses that take a payment; a draft, paid or void invoice takes none. */
export const PAYABLE_STATUSES: readonly InvoiceStatus[] = ['sent', 'viewed', 'partial'];

/** The money figures that decide an invoice's status after a payment, a refund or a credit note. */
export interface InvoiceMoney {
  status: InvoiceStatus;
  total: number;
  amount_paid: number;
  amount_credited: number;
}

/** What an invoice still asks for (minor units): its total less what was paid and what its credit notes took off. */
export function amountDue(invoice: Omit<InvoiceMoney, 'status'>): number {
  return Math.max(0, invoice.total - invoice.amount_paid - invoice.amount_credited);
}

/**
 * The one rule that sets an issued invoice's status from its money: nothing paid and credits
 * covering the total → void; payments and credits together covering it → paid; otherwise partial
 * while something is paid, else it awaits payment (sent, or viewed as it was). A draft or void
 * invoice keeps its status, and so does one with a zero total that nothing touched.
 */
export function statusFromMoney(invoice: InvoiceMoney): InvoiceStatus {
  const { status, total, amount_paid: paid, amount_credited: credited } = invoice;
  if (status === 'draft' || status === 'void') return status;
  if (paid === 0 && credited > 0 && credited >= total) return 'void';
  if (paid + credited > 0 && paid + credited >= total) return 'paid';
  if (paid > 0) return 'partial';
  return status === 'viewed' ? 'viewed' : 'sent';
}

/** Whether an invoice awaits payment: a payable status and something still due. What overdue and the reminders are about. */
export function awaitsPayment(invoice: InvoiceMoney): boolean {
  return PAYABLE_STATUSES.includes(invoice.status) && amountDue(invoice) > 0;
}

/**
 * The overdue rule, written once for both sides: in memory (`isOverdue`, every invoice read) and as
 * SQL (`overdueSql`: `GET /invoices?overdue=`, the sweep that fires `invoice.overdue`, the upgrade
 * migration). An invoice is overdue on `today` (a UTC date, `YYYY-MM-DD`, by the clock of its
 * business and mode) when it awaits payment (a payable status), something is still due, and its due
 * date has ended. Computed on every read, so it never goes stale.
 */
export function isOverdue(invoice: Omit<InvoiceMoney, 'status'> & { status: InvoiceStatus; due_date: string }, today: string): boolean {
  return awaitsPayment(invoice) && invoice.due_date < today;
}

const PAYABLE_SQL = PAYABLE_STATUSES.map((status) => `'${status}'`).join(', ');

/** `awaitsPayment` as SQL on the `invoices` table (overdue once its due date has ended; the reminders' candidates). */
export const OWING_SQL = `invoices.status in (${PAYABLE_SQL}) and invoices.total > invoices.amount_paid + invoices.amount_credited`;

/**
 * `isOverdue` as an SQL condition on the `invoices` table, `today` being an SQL expression of the UTC
 * date: `'?'` to bind one, or a column's (a frozen test clock's date). The statuses are constants, so
 * they are written into the text, which stays one prepared statement.
 */
export function overdueSql(today: string): string {
  return `${OWING_SQL} and invoices.due_date < ${today}`;
}

/**
 * When an invoice became overdue: 00:00 UTC after its due date, or when it was issued if that was
 * later (an invoice sent with a due date already past is overdue from then). What `invoice.overdue`
 * is dated at, however late it is recorded (a sweep after downtime, a test clock moved a month on).
 */
export function overdueSince(invoice: { due_date: string; sent_at: string | null }): Date {
  const dueEnded = nextUtcMidnight(utcMidnight(invoice.due_date));
  const issued = invoice.sent_at === null ? dueEnded : new Date(invoice.sent_at);
  return issued > dueEnded ? issued : dueEnded;
}
