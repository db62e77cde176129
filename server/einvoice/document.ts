/**
 * An issued invoice or a credit note in EN 16931's terms (its business terms, BT-…), as both
 * syntaxes write it: the amounts are the API's own, to the minor unit, written with the currency's
 * decimals; nothing is computed here but the sums EN 16931 asks for of amounts the document already
 * has (BT-106, the VAT breakdown merged by category and rate) and an inclusive line's net price.
 */
import Big from 'big.js';
import type { SellerSnapshot } from '../businesses/view';
import type { BuyerSnapshot } from '../clients/view';
import type { CreditNoteView } from '../credit-notes/schema';
import type { InvoiceDetail } from '../invoices/schema';
import { currencyExponent } from '../money/currencies';
import { toMinor } from '../money/amount';
import { formatMoney } from '../invoices/email';
import { xmlCharactersOf } from '../xml-text';

/** BT-24 of XRechnung 3.0, in either syntax. */
export const XRECHNUNG_SPECIFICATION = 'urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0';
/** BT-23: Peppol's billing process, which Peppol UBL and XRechnung name. */
export const PEPPOL_BILLING_PROCESS = 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0';

/** An amount's text is not zero: the optional totals (BT-113, BT-114) are written only then. */
export const isNonZero = (amount: string) => /[1-9]/.test(amount);

/**
 * What an e-invoice is written from: an invoice's or a credit note's figures and parties as the API
 * shows them, in one shape so that readiness and both syntaxes treat them alike.
 */
export interface EinvoiceSource {
  kind: 'invoice' | 'credit_note';
  /** A draft's readiness paths name where to fix it (the business, the client); a document's name its snapshot. */
  draft: boolean;
  number: string | null;
  issueDate: string;
  /** BT-9; a credit note has none and says how it was settled instead (BT-20). */
  dueDate: string | null;
  paymentTerms: string | null;
  /** BG-3: the invoice a credit note corrects. */
  corrects: { number: string; issueDate: string } | null;
  currency: string;
  buyer_reference: string | null;
  purchase_order: string | null;
  note: string | null;
  seller: SellerSnapshot;
  buyer: BuyerSnapshot;
  items: readonly Pick<InvoiceDetail['items'][number], 'description' | 'quantity' | 'unit_price' | 'amount_excluding_tax' | 'tax_rate_ids'>[];
  tax_breakdown: InvoiceDetail['tax_breakdown'];
  total_excluding_tax: number;
  total_tax: number;
  rounding_amount: number;
  total: number;
  amount_paid: number;
}

/** Text as an e-invoice can carry it: without what XML 1.0 cannot carry, trimmed; null when nothing is left, which readiness then names as missing. */
function cleanText(text: string | null): string | null {
  return text === null ? null : xmlCharactersOf(text).trim() || null;
}

function cleanParty<T extends object>(party: T): T {
  return Object.fromEntries(Object.entries(party).map(([field, value]) => [field, typeof value === 'string' ? cleanText(value) : value])) as T;
}

/** The source with its text as XML can carry it (a line whose description held only control characters has none). */
function cleaned(source: EinvoiceSource): EinvoiceSource {
  return {
    ...source,
    buyer_reference: cleanText(source.buyer_reference),
    purchase_order: cleanText(source.purchase_order),
    note: cleanText(source.note),
    seller: cleanParty(source.seller),
    buyer: cleanParty(source.buyer),
    items: source.items.map((item) => ({ ...item, description: cleanText(item.description) ?? '' })),
  };
}

export function invoiceSource(invoice: InvoiceDetail): EinvoiceSource {
  return cleaned({
    ...invoice,
    kind: 'invoice',
    // A draft voided before it was ever issued has a number but was never an invoice either.
    draft: invoice.status === 'draft' || invoice.sent_at === null,
    issueDate: invoice.issue_date,
    dueDate: invoice.due_date,
    paymentTerms: null,
    corrects: null,
    note: invoice.notes,
  });
}

/**
 * A credit note, with the invoice it corrects (its number, issue date and the buyer's references).
 * Its own total is what it credits (BT-115): nothing of it was paid.
 */
export function creditNoteSource(creditNote: CreditNoteView, invoice: InvoiceDetail): EinvoiceSource {
  const { currency } = creditNote;
  // Free text (BT-20), so written as people read amounts, with all the currency's decimals.
  const settled = [
    ['taken off the amount due', creditNote.amount_applied],
    ['refunded', creditNote.amount_refunded],
    ['settled outside the service', creditNote.out_of_band_amount],
  ].filter(([, amount]) => amount !== 0).map(([how, amount]) => `${formatMoney(toMinor(amount as number, currency), currency)} ${how}`);
  return cleaned({
    ...creditNote,
    kind: 'credit_note',
    draft: false,
    issueDate: creditNote.created_at.slice(0, 10),
    dueDate: null,
    paymentTerms: `Credit for invoice ${invoice.number}: ${settled.join(', ')}`,
    corrects: { number: invoice.number!, issueDate: invoice.issue_date },
    buyer_reference: invoice.buyer_reference,
    purchase_order: invoice.purchase_order,
    note: creditNote.memo,
    amount_paid: 0,
  });
}

export interface Party {
  name: string;
  /** BT-41: the seller's contact point, its name (XRechnung asks for one; the API keeps no person's name). */
  contactName: string | null;
  /** BT-30 / BT-47: the registration number. */
  registration: string | null;
  vatId: string | null;
  /** BT-34 / BT-49: a Peppol participant id (`0088:…`), else the e-mail address (scheme EM, which CII takes and Peppol does not). */
  endpoint: { scheme: string; id: string } | null;
  street: string | null;
  additionalStreet: string | null;
  city: string | null;
  postalCode: string | null;
  region: string | null;
  country: string;
  email: string | null;
  phone: string | null;
}

export interface Line {
  id: string;
  name: string;
  /** Negative for a discount line: EN 16931's prices are never negative (BR-27). */
  quantity: string;
  netAmount: string;
  /** BT-146: the net price of one unit, with as many decimals as it needs. */
  netPrice: string;
  category: string;
  /** Null for category O: a line not subject to VAT carries no rate (BR-O-05). */
  percent: string | null;
}

export interface VatBreakdown {
  category: string;
  percent: string;
  taxable: string;
  tax: string;
  exemptionReason: string | null;
}

export interface EnInvoice {
  /** UNCL 1001: 380 a commercial invoice, 381 a credit note. */
  typeCode: '380' | '381';
  number: string;
  issueDate: string;
  dueDate: string | null;
  paymentTerms: string | null;
  corrects: { number: string; issueDate: string } | null;
  currency: string;
  buyerReference: string | null;
  orderReference: string | null;
  note: string | null;
  seller: Party;
  buyer: Party;
  iban: string | null;
  bic: string | null;
  /** UNCL 4461: 58 SEPA credit transfer (euros), else 30 credit transfer. */
  paymentMeansCode: '58' | '30';
  lines: Line[];
  vat: VatBreakdown[];
  /** BT-106, BT-109, BT-110, BT-112, BT-113, BT-114, BT-115. */
  totals: { lines: string; excludingTax: string; tax: string; includingTax: string; paid: string; rounding: string; payable: string };
}

/**
 * Minor units written with the currency's decimals, at most two as EN 16931 allows (a three- or
 * four-decimal currency's amounts must end in zeros: readiness.ts checks it). Never rounded: an
 * amount that does not fit is an error, not a different amount.
 */
export function amountText(minor: number, currency: string): string {
  const exponent = currencyExponent(currency) ?? 2;
  const major = new Big(minor).div(10 ** exponent);
  const text = major.toFixed(Math.min(exponent, 2));
  if (!new Big(text).eq(major)) throw new Error(`${minor} minor units of ${currency} do not fit two decimals`);
  return text;
}

/** A number with up to `decimals` decimals, without trailing zeros and never in exponent notation. */
function decimalText(value: Big, decimals: number): string {
  return value.toFixed(decimals).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
}

const percentText = (percentage: number) => new Big(percentage).toString();

function party(
  fields: { name: string; contactName: string | null; registration: string | null; vatId: string | null; peppolId: string | null; email: string | null; phone: string | null },
  address: { street: string | null; additionalStreet: string | null; city: string | null; postalCode: string | null; region: string | null; country: string },
): Party {
  const [scheme, ...id] = fields.peppolId?.split(':') ?? [];
  const endpoint = fields.peppolId ? { scheme, id: id.join(':') } : fields.email ? { scheme: 'EM', id: fields.email } : null;
  return { name: fields.name, contactName: fields.contactName, registration: fields.registration, vatId: fields.vatId, endpoint, email: fields.email, phone: fields.phone, ...address };
}

/** The document in EN 16931's terms; `invoice` is issued and ready for the format (readiness.ts). */
export function toEnInvoice(invoice: EinvoiceSource): EnInvoice {
  const { currency, seller, buyer } = invoice;
  const money = (amount: number) => amountText(toMinor(amount, currency), currency);
  const rates = new Map(invoice.tax_breakdown.map((rate) => [rate.tax_rate_id, rate]));
  const lines = invoice.items.map((item, index): Line => {
    const rate = rates.get(item.tax_rate_ids[0])!;
    const negative = item.amount_excluding_tax < 0 || (item.amount_excluding_tax === 0 && item.unit_price < 0);
    const quantity = new Big(item.quantity).times(negative ? -1 : 1);
    const net = new Big(toMinor(item.amount_excluding_tax, currency));
    return {
      id: String(index + 1),
      name: item.description,
      quantity: quantity.toString(),
      netAmount: money(item.amount_excluding_tax),
      // Ten decimals: quantity × price stays within a ten-thousandth of the line (PEPPOL-EN16931-R120) up to a million units.
      netPrice: decimalText(net.div(quantity).div(10 ** (currencyExponent(currency) ?? 2)), 10),
      category: rate.category,
      percent: rate.category === 'O' ? null : percentText(rate.percentage),
    };
  });
  const linesMinor = invoice.items.reduce((sum, item) => sum + toMinor(item.amount_excluding_tax, currency), 0);
  const includingTax = toMinor(invoice.total_excluding_tax, currency) + toMinor(invoice.total_tax, currency);
  return {
    typeCode: invoice.kind === 'credit_note' ? '381' : '380',
    number: invoice.number!,
    issueDate: invoice.issueDate,
    dueDate: invoice.dueDate,
    paymentTerms: invoice.paymentTerms,
    corrects: invoice.corrects,
    currency,
    buyerReference: invoice.buyer_reference,
    orderReference: invoice.purchase_order,
    note: invoice.note,
    seller: party(
      { name: seller.legal_name!, contactName: seller.legal_name, registration: seller.registration_number, vatId: seller.tax_id, peppolId: seller.peppol_id, email: seller.email, phone: seller.phone },
      { street: seller.address_line1, additionalStreet: seller.address_line2, city: seller.city, postalCode: seller.postal_code, region: seller.state, country: seller.country! },
    ),
    buyer: party(
      { name: buyer.company ?? buyer.name!, contactName: null, registration: null, vatId: buyer.tax_id, peppolId: buyer.peppol_id, email: buyer.email, phone: null },
      { street: firstLine(buyer.address), additionalStreet: otherLines(buyer.address), city: buyer.city, postalCode: buyer.postal_code, region: buyer.state, country: buyer.country! },
    ),
    iban: seller.iban,
    bic: seller.bic,
    paymentMeansCode: currency === 'EUR' ? '58' : '30',
    lines,
    vat: vatBreakdownOf(invoice).map(({ category, percentage, taxable, tax, exemptionReason }) => ({
      category,
      percent: percentText(percentage),
      taxable: amountText(taxable, currency),
      tax: amountText(tax, currency),
      exemptionReason,
    })),
    totals: {
      lines: amountText(linesMinor, currency),
      excludingTax: money(invoice.total_excluding_tax),
      tax: money(invoice.total_tax),
      includingTax: amountText(includingTax, currency),
      paid: money(invoice.amount_paid),
      rounding: money(invoice.rounding_amount),
      payable: amountText(toMinor(invoice.total, currency) - toMinor(invoice.amount_paid, currency), currency),
    },
  };
}

/** BG-23: the invoice's tax breakdown merged by VAT category and rate (minor units), as EN 16931 groups it. */
export function vatBreakdownOf(invoice: Pick<EinvoiceSource, 'currency' | 'tax_breakdown'>): { category: string; percentage: number; taxable: number; tax: number; exemptionReason: string | null }[] {
  const { currency } = invoice;
  const merged = new Map<string, { category: string; percentage: number; taxable: number; tax: number; exemptionReason: string | null }>();
  for (const rate of invoice.tax_breakdown) {
    const key = `${rate.category} ${rate.percentage}`;
    const entry = merged.get(key) ?? { category: rate.category, percentage: rate.percentage, taxable: 0, tax: 0, exemptionReason: null };
    entry.taxable += toMinor(rate.taxable_amount, currency);
    entry.tax += toMinor(rate.tax_amount, currency);
    // Two rates merged into one entry keep both their reasons.
    if (rate.exemption_reason && !entry.exemptionReason?.split('; ').includes(rate.exemption_reason)) {
      entry.exemptionReason = entry.exemptionReason ? `${entry.exemptionReason}; ${rate.exemption_reason}` : rate.exemption_reason;
    }
    merged.set(key, entry);
  }
  return [...merged.values()];
}

function firstLine(address: string | null): string | null {
  return address?.split(/\r?\n/).map((line) => line.trim()).find(Boolean) ?? null;
}

function otherLines(address: string | null): string | null {
  const lines = address?.split(/\r?\n/).map((line) => line.trim()).filter(Boolean) ?? [];
  return lines.length > 1 ? lines.slice(1).join(', ') : null;
}
