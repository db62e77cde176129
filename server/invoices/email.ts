/**
 * The e-mails to an invoice's client, plain text and HTML with the same facts and the payment link:
 * the invoice itself (the queue attaches the PDF) and the payment reminders (the link alone).
 */
import { OutgoingEmail } from '../email/mailer';
import { currencyExponent } from '../money/currencies';
import { html, SafeHtml } from '../pages/html';
import { amountDue, InvoiceMoney } from './status';

export interface InvoiceEmailInput {
  businessName: string;
  clientName: string;
  clientEmail: string;
  /** 'INV-000001' */
  number: string;
  /** What is left to pay (the total until a first payment), already formatted, e.g. '$1,234.50' (see formatMoney). */
  amountDue: string;
  /** 'YYYY-MM-DD' */
  dueDate: string;
  paymentUrl: string;
  notes: string | null;
}

/** Whom an invoice's e-mail is from and to. */
export interface EmailParties {
  businessName: string;
  clientName: string;
  clientEmail: string;
}

/** What every e-mail about an invoice states of it: its number, what is left to pay, its due date and the payment link. */
export function invoiceEmailFacts(
  invoice: Omit<InvoiceMoney, 'status'> & { number: string | null; currency: string; due_date: string },
  parties: EmailParties,
  paymentUrl: string,
): Omit<InvoiceEmailInput, 'notes'> {
  return {
    ...parties,
    number: invoice.number ?? '',
    // What is left to pay: the total until a first payment, less payments and credit notes since.
    amountDue: formatMoney(amountDue(invoice), invoice.currency),
    dueDate: invoice.due_date,
    paymentUrl,
  };
}

/** The link is ours (built from BASE_URL), but a javascript: or data: URL must never become a button. */
function assertWebLink(paymentUrl: string): void {
  if (!/^https?:\/\//i.test(paymentUrl)) throw new Error(`The payment link must be an http(s) URL, got ${paymentUrl}`);
}

export function invoiceEmail(input: InvoiceEmailInput): OutgoingEmail {
  assertWebLink(input.paymentUrl);
  const notes = input.notes?.trim() || null;
  return {
    to: input.clientEmail,
    subject: `Invoice ${input.number} from ${input.businessName}`.replace(/\s+/g, ' '),
    text: invoiceText(input, notes),
    html: invoiceHtml(input, notes),
  };
}

function invoiceText(input: InvoiceEmailInput, notes: string | null): string {
  return [
    `Hello ${input.clientName},`,
    '',
    `${input.businessName} has sent you invoice ${input.number}. It is attached as a PDF.`,
    '',
    ...factLines(input),
    '',
    'Pay this invoice online:',
    input.paymentUrl,
    ...(notes ? ['', 'Notes:', notes] : []),
    '',
    `Thank you,`,
    input.businessName,
    '',
  ].join('\n');
}

function invoiceHtml(input: InvoiceEmailInput, notes: string | null): string {
  const noteLines = (notes ?? '').split(/\r?\n/).map((line, i) => (i ? html`<br>${line}` : line));
  return emailHtml(
    'Invoice',
    input,
    html`${input.businessName} has sent you invoice <strong>${input.number}</strong>. It is attached as a PDF.`,
    html`${notes && html`<p><strong>Notes</strong><br>${noteLines}</p>
`}<p>Thank you,<br>${input.businessName}</p>
`,
  );
}

/**
 * The HTML both e-mails share, written with the pages' `html` tag (every value escaped, and
 * right-to-left or bidi-control text isolated as on the pages): `title` before the invoice's number,
 * the greeting, `intro`, the invoice's facts and the pay button, then `closing`.
 */
function emailHtml(title: string, input: Omit<InvoiceEmailInput, 'notes'>, intro: SafeHtml, closing: SafeHtml): string {
  return html`<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>${title} ${input.number}</title></head>
<body style="margin:0;padding:24px;font-family:Arial,Helvetica,sans-serif;font-size:15px;color:#222;background:#fff">
<p>Hello ${input.clientName},</p>
<p>${intro}</p>
<table role="presentation" style="border-collapse:collapse;margin:16px 0">
${factRow('Invoice', input.number)}
${factRow('Amount due', input.amountDue)}
${factRow('Due date', input.dueDate)}
</table>
${payButton(input.paymentUrl)}
${closing}</body>
</html>
`.value;
}

/** The amount due and the due date, as both e-mails' text states them. */
function factLines(input: Pick<InvoiceEmailInput, 'amountDue' | 'dueDate'>): string[] {
  return [`Amount due: ${input.amountDue}`, `Due date:   ${input.dueDate}`];
}

const factRow = (label: string, value: string) => html`<tr><td style="padding:4px 16px 4px 0;color:#555">${label}</td><td style="padding:4px 0;font-weight:bold">${value}</td></tr>`;

const payButton = (paymentUrl: string) => html`<p style="margin:24px 0"><a href="${paymentUrl}" style="display:inline-block;padding:12px 24px;background:#1a56db;color:#fff;text-decoration:none;border-radius:4px;font-weight:bold">Pay this invoice</a></p>
<p style="font-size:13px;color:#555">Or open this link: <a href="${paymentUrl}">${paymentUrl}</a></p>`;

export interface ReminderEmailInput extends Omit<InvoiceEmailInput, 'notes'> {
  /** The reminder's offset: days from the due date, negative before it. */
  offsetDays: number;
}

/**
 * A payment reminder: the amount still due and the payment link, and where the invoice stands on
 * the reminder's day: due on its date (before it), due today (on it), overdue since it (after it).
 */
export function reminderEmail(input: ReminderEmailInput): OutgoingEmail {
  assertWebLink(input.paymentUrl);
  const standing =
    input.offsetDays < 0 ? `is due on ${input.dueDate}` : input.offsetDays === 0 ? `is due today, ${input.dueDate}` : `is overdue since ${input.dueDate}`;
  return {
    to: input.clientEmail,
    subject: `Reminder: invoice ${input.number} from ${input.businessName} ${standing}`.replace(/\s+/g, ' '),
    text: [
      `Hello ${input.clientName},`,
      '',
      `A reminder from ${input.businessName}: invoice ${input.number} ${standing}.`,
      '',
      ...factLines(input),
      '',
      'Pay it online:',
      input.paymentUrl,
      '',
      'If you have paid it already, thank you, and please ignore this reminder.',
      '',
      input.businessName,
      '',
    ].join('\n'),
    html: emailHtml(
      'Reminder: invoice',
      input,
      html`A reminder from ${input.businessName}: invoice <strong>${input.number}</strong> ${standing}.`,
      html`<p>If you have paid it already, thank you, and please ignore this reminder.</p>
<p>${input.businessName}</p>
`,
    ),
  };
}

/**
 * 123450 USD → '$1,234.50'; 1235 JPY → '¥1,235'; 1234567 KWD → 'KWD 1,234.567'. The decimals are the
 * currency's ISO 4217 exponent, the one amounts are stored in, not CLDR's display default. Dividing is
 * exact enough: amounts stay below 10^12 minor units, far from where a float could misplace a digit.
 */
export function formatMoney(minor: number, currency: string): string {
  const exponent = currencyExponent(currency);
  if (exponent === undefined) throw new Error(`${currency} is not a known currency`);
  if (!Number.isSafeInteger(minor)) throw new Error(`${minor} is not an amount in minor units`);
  return moneyFormat(currency, exponent).format(minor / 10 ** exponent);
}

/** One formatter per currency: making one costs far more than formatting (a PDF formats thousands of amounts). */
const moneyFormats = new Map<string, Intl.NumberFormat>();

function moneyFormat(currency: string, exponent: number): Intl.NumberFormat {
  let format = moneyFormats.get(currency);
  if (!format) {
    format = new Intl.NumberFormat('en-US', { style: 'currency', currency, minimumFractionDigits: exponent, maximumFractionDigits: exponent });
    moneyFormats.set(currency, format);
  }
  return format;
}
