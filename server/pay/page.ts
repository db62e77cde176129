/** The hosted payment page a client reaches from the invoice e-mail or a payment link: plain HTML, no scripts. */
import { escapeHtml as e, formatMoney } from '../invoices/email';
import { InvoiceDetail } from '../invoices/view';
import { toMinor } from '../money/amount';

const STATUS_LINES: Record<string, string> = {
  sent: 'Awaiting payment',
  viewed: 'Awaiting payment',
  partial: 'Partly paid',
  paid: 'Paid — thank you',
  void: 'This invoice was cancelled',
};

function layout(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${e(title)}</title>
<style>body{font-family:system-ui,Arial,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;width:100%}td,th{padding:.4rem;border-bottom:1px solid #ddd;text-align:left}
.num{text-align:right}.status{display:inline-block;padding:.2rem .6rem;border-radius:1rem;background:#eef}</style></head>
<body>${body}</body></html>`;
}

export function paymentPage(invoice: InvoiceDetail, businessName: string): string {
  const money = (major: number) => e(formatMoney(toMinor(major, invoice.currency), invoice.currency));
  const rows = invoice.items
    .map((item) => `<tr><td>${e(item.description)}</td><td class="num">${item.quantity}</td><td class="num">${money(item.unit_price)}</td><td class="num">${money(item.amount)}</td></tr>`)
    .join('');
  const body = `<h1>${e(businessName)}</h1>
<h2>Invoice ${e(invoice.number ?? '')}</h2>
<p class="status" data-status="${e(invoice.status)}">${e(STATUS_LINES[invoice.status] ?? invoice.status)}</p>
${invoice.livemode ? '' : '<p><strong>Test mode:</strong> no real payment is taken.</p>'}
<table><thead><tr><th>Description</th><th class="num">Qty</th><th class="num">Unit price</th><th class="num">Amount</th></tr></thead>
<tbody>${rows}</tbody>
<tfoot><tr><th colspan="3">Total</th><td class="num">${money(invoice.total)}</td></tr>
<tr><th colspan="3">Paid</th><td class="num">${money(invoice.amount_paid)}</td></tr>
<tr><th colspan="3">Amount due</th><td class="num" id="amount-due">${money(invoice.amount_due)}</td></tr></tfoot></table>
<p>Due date: ${e(invoice.due_date)}</p>
${invoice.notes ? `<p>${e(invoice.notes)}</p>` : ''}`;
  return layout(`Invoice ${invoice.number ?? ''} — ${businessName}`, body);
}

export function notFoundPage(): string {
  return layout('Invoice not found', '<h1>Invoice not found</h1><p>This payment link is not valid. Ask the sender for a new one.</p>');
}
