/**
 * A received invoice's terms as an expense (docs/api.md, "Importing e-invoices as expenses"): each
 * value checked as EN 16931 writes it, amounts converted to minor units exactly (more decimals than
 * the currency has is refused, never rounded), text on one line without control characters, and
 * the document's identity for the duplicate rule. Pure.
 */
import { createHash } from 'node:crypto';
import { FieldErrors, ValidationFailed } from '../errors';
import { AmountProblem, MAX_MINOR_AMOUNT, toMinor } from '../money/amount';
import { currencyExponent, isCurrency } from '../money/currencies';
import { isCalendarDate } from '../validation';
import type { ReceivedInvoice } from './received-invoice';
import { withoutControlCharacters } from './received-document';
import { DOCUMENT_NUMBER_MAX, VENDOR_TAX_ID_MAX } from './schema';

/** The columns of an imported expense, amounts in minor units of `currency`. */
export interface ImportedExpense {
  amount: number;
  currency: string;
  category: string;
  date: string;
  description: string;
  vendor: string;
  tax_amount: number | null;
  vendor_tax_id: string | null;
  document_number: string;
  /** What makes two imports one document: see documentKey. */
  document_key: string;
}

const VENDOR_MAX = 255;
const DESCRIPTION_MAX = 1000;

/** Where each term sits in either syntax, for the messages. */
const WHERE: Record<string, { UBL: string; CII: string }> = {
  'BT-1': { UBL: 'cbc:ID', CII: 'rsm:ExchangedDocument/ram:ID' },
  'BT-2': { UBL: 'cbc:IssueDate', CII: 'rsm:ExchangedDocument/ram:IssueDateTime/udt:DateTimeString' },
  'BT-3': { UBL: 'cbc:InvoiceTypeCode', CII: 'rsm:ExchangedDocument/ram:TypeCode' },
  'BT-5': { UBL: 'cbc:DocumentCurrencyCode', CII: 'ram:ApplicableHeaderTradeSettlement/ram:InvoiceCurrencyCode' },
  'BT-27': { UBL: 'cac:AccountingSupplierParty/cac:Party/cac:PartyLegalEntity/cbc:RegistrationName', CII: 'ram:SellerTradeParty/ram:Name' },
  'BT-31': { UBL: "cac:AccountingSupplierParty/cac:Party/cac:PartyTaxScheme[cac:TaxScheme/cbc:ID='VAT']/cbc:CompanyID", CII: "ram:SellerTradeParty/ram:SpecifiedTaxRegistration/ram:ID[@schemeID='VA']" },
  'BT-110': { UBL: 'cac:TaxTotal/cbc:TaxAmount', CII: 'ram:SpecifiedTradeSettlementHeaderMonetarySummation/ram:TaxTotalAmount' },
  'BT-112': { UBL: 'cac:LegalMonetaryTotal/cbc:TaxInclusiveAmount', CII: 'ram:SpecifiedTradeSettlementHeaderMonetarySummation/ram:GrandTotalAmount' },
  'BT-114': { UBL: 'cac:LegalMonetaryTotal/cbc:PayableRoundingAmount', CII: 'ram:SpecifiedTradeSettlementHeaderMonetarySummation/ram:RoundingAmount' },
};

/** An xsd:decimal as EN 16931 writes amounts: digits, one optional dot, an optional sign. */
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

/**
 * The minor units of an amount written as decimal text. Its decimals are counted on the text (not
 * on a float it reads as: 100.0000000000000001 is not 100), trailing zeros aside (12.50 is 12.5).
 */
function minorOf(text: string, currency: string): number {
  if (!DECIMAL.test(text)) throw new AmountProblem(`must be a decimal number such as 12.50, not "${text}"`);
  const decimals = (text.split('.')[1] ?? '').replace(/0+$/, '').length;
  const exponent = currencyExponent(currency)!;
  if (decimals > exponent) throw new AmountProblem(exponent === 0 ? `${currency} amounts have no decimals, not "${text}"` : `${currency} amounts have at most ${exponent} decimals, not "${text}"`);
  // At most the currency's decimals and (checked by toMinor) at most MAX_MINOR_AMOUNT: the number is exact.
  return toMinor(Number(text), currency);
}

/** BT-2 as a calendar date: UBL's xsd:date (a time zone, if any, dropped), CII's format 102 (YYYYMMDD). */
function dateOf(received: ReceivedInvoice): string | undefined {
  const raw = received.issueDate!;
  if (received.syntax === 'UBL') {
    const match = /^(\d{4}-\d{2}-\d{2})(Z|[+-]\d{2}:\d{2})?$/.exec(raw);
    return match && isCalendarDate(match[1]) ? match[1] : undefined;
  }
  const match = /^(\d{4})(\d{2})(\d{2})$/.exec(raw);
  const date = match ? `${match[1]}-${match[2]}-${match[3]}` : undefined;
  return received.issueDateFormat === '102' && date && isCalendarDate(date) ? date : undefined;
}

/** A text term as one line: control characters left out, runs of white space (line breaks, tabs) one space; null when nothing is left. */
function oneLine(text: string | null): string | null {
  const line = text === null ? undefined : withoutControlCharacters(text).replace(/\s+/g, ' ').trim();
  return line ? line : null;
}

/** The longest start of `text` within `max` UTF-16 code units, cut between code points: no half of a surrogate pair is left. */
function startOf(text: string, max: number): string {
  if (text.length <= max) return text;
  let start = '';
  for (const codePoint of Array.from(text)) {
    if (start.length + codePoint.length > max) break;
    start += codePoint;
  }
  return start;
}

/** `Invoice 471102: Trennblätter A4`, `… (and 2 more lines)`, within the description's 1000 characters. */
function descriptionOf(number: string, line: string | null, lineCount: number): string {
  const more = lineCount > 1 ? ` (and ${lineCount - 1} more line${lineCount > 2 ? 's' : ''})` : '';
  const head = `Invoice ${number}`;
  if (!line) return startOf(`${head}${more}`, DESCRIPTION_MAX);
  const room = DESCRIPTION_MAX - head.length - 2 - more.length;
  return `${head}: ${line.length > room ? `${startOf(line, Math.max(0, room - 1))}…` : line}${more}`;
}

/**
 * Who sent which invoice: the seller's VAT identifier (BT-31) — or, without one, its name (BT-27) —
 * and the invoice number (BT-1). Identifiers compare without spaces, dots or hyphens and in upper
 * case (`DE 123.456.789` is `DE123456789`), names without case and runs of spaces, numbers as written.
 * Hashed: one short binary-compared column, whatever the lengths and the database's collation.
 */
export function documentKey(vendorTaxId: string | null, vendor: string, number: string): string {
  const seller = vendorTaxId
    ? ['vat', vendorTaxId.normalize('NFKC').replace(/[\s.-]/g, '').toUpperCase()]
    : ['name', vendor.normalize('NFKC').replace(/\s+/g, ' ').trim().toLowerCase()];
  return createHash('sha256').update(JSON.stringify([...seller, number.normalize('NFC')])).digest('hex');
}

/** The expense a received invoice describes; ValidationFailed naming each term (BT-…) that is missing or refused. */
export function importedExpense(received: ReceivedInvoice, category: string): ImportedExpense {
  const errors: FieldErrors = {};
  // A message may quote the document's text: without its control characters, as the values.
  const refuse = (term: string, message: string) => {
    errors[term] = [...(errors[term] ?? []), `${withoutControlCharacters(message)} (${WHERE[term][received.syntax]})`];
  };
  const required = (term: string, value: string | null): value is string => {
    if (value === null) refuse(term, 'is missing');
    return value !== null;
  };
  const longest = (term: string, value: string | null, max: number) => {
    if (value !== null && value.length > max) refuse(term, `is longer than ${max} characters`);
  };

  const number = oneLine(received.number);
  const vendor = oneLine(received.sellerName);
  const vatId = oneLine(received.sellerVatId);
  required('BT-1', number);
  longest('BT-1', number, DOCUMENT_NUMBER_MAX);
  // An invoice's code was checked when the document was read (./received-invoice.ts); without one, the document is not an invoice either.
  required('BT-3', received.typeCode);
  required('BT-27', vendor);
  longest('BT-27', vendor, VENDOR_MAX);
  longest('BT-31', vatId, VENDOR_TAX_ID_MAX);

  const date = required('BT-2', received.issueDate) ? dateOf(received) : undefined;
  if (received.issueDate !== null && date === undefined) {
    refuse('BT-2', received.syntax === 'UBL' ? `must be a date, YYYY-MM-DD, not "${received.issueDate}"` : `must be a date in format 102, YYYYMMDD, not "${received.issueDate}"`);
  }

  // Written as ISO 4217 and EN 16931's code list write it, in capitals: `eur` is refused rather than guessed at.
  const currency = received.currency;
  const knownCurrency = required('BT-5', currency) && isCurrency(currency);
  if (currency !== null && !knownCurrency) {
    refuse('BT-5', isCurrency(currency.toUpperCase()) ? `must be written in capitals, as ISO 4217 has it: ${currency.toUpperCase()}, not "${currency}"` : `must be an ISO 4217 code such as EUR, not "${currency}"`);
  }
  // An amount's currencyID, when it has one, is the invoice's currency: a total in another currency is not this expense's.
  const inInvoiceCurrency = (term: string, currencyId: string | null) => {
    if (knownCurrency && currencyId !== null && currencyId !== currency) refuse(term, `is in ${currencyId}, not in the invoice's currency ${currency} (BT-5)`);
  };
  inInvoiceCurrency('BT-112', received.totalWithTaxCurrency);
  inInvoiceCurrency('BT-114', received.roundingCurrency);

  const amountOf = (term: string, text: string | null): number | null => {
    if (text === null || !knownCurrency || currency === null) return null;
    try {
      return minorOf(text, currency);
    } catch (err) {
      if (!(err instanceof AmountProblem)) throw err;
      refuse(term, err.message);
      return null;
    }
  };
  required('BT-112', received.totalWithTax);
  const totalWithTax = amountOf('BT-112', received.totalWithTax);
  const rounding = amountOf('BT-114', received.roundingAmount) ?? 0;
  const tax = amountOf('BT-110', received.taxTotal);
  const amount = totalWithTax === null ? null : totalWithTax + rounding;
  if (amount !== null && amount <= 0) refuse('BT-112', 'with the rounding amount (BT-114) must be more than 0: an expense is money paid out');
  if (amount !== null && amount > MAX_MINOR_AMOUNT) refuse('BT-112', 'with the rounding amount (BT-114) is too large');

  if (Object.keys(errors).length) throw new ValidationFailed(errors, 'The e-invoice lacks or misstates what an expense needs: see errors');
  return {
    amount: amount!,
    currency: currency!,
    category,
    date: date!,
    description: descriptionOf(number!, oneLine(received.firstLineName), received.lineCount),
    vendor: vendor!,
    tax_amount: tax,
    vendor_tax_id: vatId,
    document_number: number!,
    document_key: documentKey(vatId, vendor!, number!),
  };
}
