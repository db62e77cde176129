/** The hosted payment page a client reaches from the invoice e-mail or a payment link: plain HTML, no scripts. */
import { formatMoney } from '../invoices/email';
import { buyerLines, formatPercentage, sellerDetails, taxLineLabel, taxNotes } from '../invoices/legal-text';
import { InvoiceDetail } from '../invoices/schema';
import { PAYABLE_STATUSES } from '../invoices/model';
import { toMinor } from '../money/amount';
import { html, SafeHtml } from '../pages/html';
import { page, refusedFormPage, tryAgainLaterPage } from '../pages/layout';
import { PageAnswer } from '../pages/route';
import { paymentMethodName, tookMoney } from '../payments/view';
import type { PayAction, PaymentPageState, PayOutcome, PdfDownload } from './service';

const STATUS_LINES: Record<string, string> = {
  sent: 'Awaiting payment',
  viewed: 'Awaiting payment',
  partial: 'Partly paid',
  paid: 'Paid — thank you',
  void: 'This invoice was cancelled',
};

const PAY_NOTES: Record<'test' | 'gateway', string> = {
  test: 'Test mode: the button records a simulated payment.',
  gateway: 'You will pay on the payment provider\'s secure page.',
};

const NOTICES: Record<'not_set_up' | 'amount_not_accepted', string> = {
  not_set_up: 'Online payment is not set up for this invoice.',
  // The gateway cannot charge it exactly (a KWD amount not ending in 0, ISK with øre): it is never rounded.
  amount_not_accepted: 'Online payment is not available for this amount.',
};

export interface PaymentPageView {
  invoice: InvoiceDetail;
  businessName: string;
  /** Absent when nothing is due. */
  action?: PayAction;
  /** The client is back from the gateway's checkout and the gateway has not confirmed yet. */
  confirming?: boolean;
  /** Where `Download PDF` leads: the invoice, the receipt once paid. */
  pdfUrl?: string;
}

/** The seller's e-mail address as a link to write to. */
const mailto = (email: string) => html`<a href="mailto:${email}">${email}</a>`;

function payControls(invoice: InvoiceDetail, businessName: string, action: PayAction, money: (major: number) => string): SafeHtml {
  if (!('formToken' in action)) {
    const { email } = invoice.seller;
    return html`<p class="notice">${NOTICES[action.kind]} Please contact ${businessName}${email ? html` at ${mailto(email)}` : ''} to pay it.</p>`;
  }
  return html`<form method="post">
<input type="hidden" name="form_token" value="${action.formToken}">
<button type="submit">Pay ${money(invoice.amount_due)}</button>
<p class="hint">${PAY_NOTES[action.kind]}</p>
</form>`;
}

/**
 * The money taken, and what of it was given back: a refund column only when there was one. A
 * payment's reference (a bank transfer's, the gateway's payment id) is a line of its own under the
 * payment, across the table: in a column, a phone would break it in pieces.
 */
function receipt(invoice: InvoiceDetail, money: (major: number) => string): SafeHtml {
  const taken = invoice.payments.filter(tookMoney);
  if (!taken.length) return html``;
  const refunds = taken.some((payment) => payment.amount_refunded > 0);
  const reference = (text: string) => html`<tr class="reference"><td colspan="${refunds ? 4 : 3}"><span class="hint">Reference: ${text}</span></td></tr>`;
  return html`<h3>Payments</h3>
<table><thead><tr><th>Date</th><th>Method</th><th class="num">Amount</th>${refunds ? html`<th class="num">Refunded</th>` : ''}</tr></thead>
<tbody>${taken.map(
    (payment) =>
      html`<tr${payment.gateway_reference ? html` class="with-reference"` : ''}><td class="date">${(payment.paid_at ?? payment.created_at).slice(0, 10)}</td><td>${paymentMethodName(payment.method)}</td><td class="num">${money(payment.amount)}</td>${
        refunds ? html`<td class="num">${payment.amount_refunded > 0 ? money(payment.amount_refunded) : '—'}</td>` : ''
      }</tr>${payment.gateway_reference ? reference(payment.gateway_reference) : ''}`,
  )}</tbody></table>`;
}

/** Texts one under the other; a text of several lines (a street) keeps its breaks. */
function lines(texts: readonly (string | SafeHtml)[]): SafeHtml {
  const split = texts.flatMap((text): (string | SafeHtml)[] => (text instanceof SafeHtml ? [text] : text.split(/\r\n|\r|\n/)));
  return html`${split.map((text, index) => html`${index ? html`<br>` : ''}${text}`)}`;
}

/**
 * Who the invoice is from and to: the seller's legal block and the buyer's, one row each (side by
 * side, a phone would break every line). The page shows them after the Pay button, which comes first.
 */
function parties(invoice: InvoiceDetail): SafeHtml {
  const [buyerName, ...buyer] = buyerLines(invoice.buyer, invoice);
  // The seller's contact: its e-mail address, the line a client most likely needs, is a link.
  const seller = sellerDetails(invoice.seller).map((text) => (text === invoice.seller.email ? mailto(text) : text));
  const party = (role: string, name: string | null, details: (string | SafeHtml)[]) =>
    html`<tr><th scope="row">${role}</th><td><strong>${name}</strong>${details.length ? html`<br>${lines(details)}` : ''}</td></tr>`;
  return html`<table><tbody>${party('From', invoice.seller.legal_name, seller)}${party('Bill to', buyerName, buyer)}</tbody></table>`;
}

/**
 * The items, with a tax column (each line's rates as applied) when the invoice has any rate, and
 * the totals: with taxes (or a rounding) the subtotal excluding tax, one row per rate and the
 * rounding come first. Every amount is the invoice's own, never worked out here.
 */
function itemsTable(invoice: InvoiceDetail, money: (major: number) => string): SafeHtml {
  const percentages = new Map(invoice.tax_breakdown.map((line) => [line.tax_rate_id, formatPercentage(line.percentage)]));
  const taxed = percentages.size > 0;
  const span = taxed ? 4 : 3;
  const row = (label: string, amount: number) => html`<tr><th colspan="${span}">${label}</th><td class="num">${money(amount)}</td></tr>`;
  // The steps to the total in regular type, so the total and what is due stand out.
  const step = (label: string, amount: number) => html`<tr><td colspan="${span}">${label}</td><td class="num">${money(amount)}</td></tr>`;
  const breakdown =
    taxed || invoice.rounding_amount !== 0
      ? [
          step('Subtotal', invoice.total_excluding_tax),
          ...invoice.tax_breakdown.map((line) => step(taxLineLabel(line.display_name, line.percentage, money(line.taxable_amount)), line.tax_amount)),
          invoice.rounding_amount !== 0 ? step('Rounding', invoice.rounding_amount) : '',
        ]
      : [];
  return html`<table><thead><tr><th class="wide">Description</th><th class="num">Qty</th><th class="num">Unit price</th>${taxed ? html`<th class="num">Tax</th>` : ''}<th class="num">Amount</th></tr></thead>
<tbody>${invoice.items.map(
    (item) =>
      html`<tr><td>${item.description}</td><td class="num">${item.quantity}</td><td class="num">${money(item.unit_price)}</td>${
        taxed ? html`<td class="num">${item.tax_rate_ids.flatMap((id) => percentages.get(id) ?? []).join(', ') || '—'}</td>` : ''
      }<td class="num">${money(item.amount)}</td></tr>`,
  )}</tbody>
<tfoot>${breakdown}${row('Total', invoice.total)}
${row('Paid', invoice.amount_paid)}
${invoice.amount_credited > 0 ? row('Credited', invoice.amount_credited) : ''}
<tr class="due"><th colspan="${span}">Amount due</th><td class="num" id="amount-due">${money(invoice.amount_due)}</td></tr></tfoot></table>`;
}

export function paymentPage({ invoice, businessName, action, confirming, pdfUrl }: PaymentPageView): string {
  const money = (major: number) => formatMoney(toMinor(major, invoice.currency), invoice.currency);
  const payable = PAYABLE_STATUSES.includes(invoice.status) && invoice.amount_due > 0;
  const notes = taxNotes(invoice.tax_breakdown, invoice.buyer, invoice.tax_exempt);
  const body = html`<h1>${businessName}</h1>
<h2>Invoice ${invoice.number ?? ''}</h2>
<p class="status" data-status="${invoice.status}">${confirming ? 'Confirming payment' : (STATUS_LINES[invoice.status] ?? invoice.status)}</p>
${invoice.livemode ? '' : html`<p class="test-mode"><strong>Test mode:</strong> no real payment is taken.</p>`}
${itemsTable(invoice, money)}
${notes.length ? html`<p>${lines(notes)}</p>` : ''}
<p>Issue date: ${invoice.issue_date}${invoice.status === 'paid' ? '' : html`<br>Due date: ${invoice.due_date}`}</p>
${confirming ? html`<p class="notice" role="status">Confirming your payment with the payment provider… This page reloads by itself.</p>` : ''}
${payable && action && !confirming ? payControls(invoice, businessName, action, money) : ''}
${parties(invoice)}
${receipt(invoice, money)}
${invoice.notes ? html`<p>${invoice.notes}</p>` : ''}
${pdfUrl ? html`<p><a class="download" href="${pdfUrl}" download>Download PDF</a></p>` : ''}
<footer>Invoice from ${businessName}</footer>`;
  return page(`Invoice ${invoice.number ?? ''} — ${businessName}`, body, confirming ? { refresh: { seconds: 3 } } : {});
}

/** The step between the Pay button and the gateway's checkout: a redirect without script (and a link, should it not follow). */
export function checkoutRedirectPage(url: string): string {
  return page(
    'Taking you to secure checkout',
    html`<h1>Taking you to secure checkout…</h1><p><a href="${url}">Continue to secure checkout</a></p>`,
    { refresh: { seconds: 0, url } },
  );
}

/** The gateway will never charge this amount (below its minimum, above its maximum): nothing was charged, and trying again will not help. */
export function amountNotAcceptedPage(): string {
  return page(
    'Online payment is not available for this amount',
    html`<h1>Online payment is not available for this amount</h1><p>Nothing was charged. Please contact the sender of this invoice to pay it another way.</p>`,
  );
}

/** The gateway refused or could not be reached: nothing was charged. */
export function gatewayUnavailablePage(): string {
  return page(
    'Online payment is unavailable',
    html`<h1>Online payment is unavailable right now</h1><p>Nothing was charged. Please go back and try again in a few minutes.</p>`,
  );
}

export function notFoundPage(): string {
  return page('Invoice not found', html`<h1>Invoice not found</h1><p>This payment link is not valid. Ask the sender for a new one.</p>`);
}

/** The page's own path, where Pay leads back to. */
const pagePath = (token: string) => `/pay/${encodeURIComponent(token)}`;

export function paymentPageAnswer(token: string, state: PaymentPageState | null): PageAnswer {
  if (!state) return { status: 404, html: notFoundPage() };
  return { html: paymentPage({ ...state, pdfUrl: `${pagePath(token)}/pdf` }) };
}

export function pdfAnswer(download: PdfDownload): PageAnswer {
  switch (download.kind) {
    case 'not_found':
      return { status: 404, html: notFoundPage() };
    case 'busy':
      return { status: 503, retryAfterSeconds: download.retryAfterSeconds, html: tryAgainLaterPage() };
    case 'file':
      return { file: { filename: download.filename, content: download.content, type: 'application/pdf' } };
  }
}

export function payAnswer(token: string, outcome: PayOutcome): PageAnswer {
  switch (outcome.kind) {
    case 'not_found':
      return { status: 404, html: notFoundPage() };
    case 'refused':
      return { status: 403, html: refusedFormPage() };
    case 'checkout':
      return { html: checkoutRedirectPage(outcome.url) };
    case 'amount_not_accepted':
      return { status: 422, html: amountNotAcceptedPage() };
    case 'gateway_unavailable':
      return { status: 502, html: gatewayUnavailablePage() };
    case 'back':
      return { status: 303, redirect: pagePath(token) };
  }
}
