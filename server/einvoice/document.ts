/**
 * An issued invoice in EN 16931's terms (its business terms, BT-…), as both syntaxes write it: the
 * amounts are the API's own, to the minor unit, written with the currency's decimals; nothing is
 * computed here but the sums EN 16931 asks for of amounts the invoice already has (BT-106, the VAT
 * breakdown merged by category and rate) and an inclusive line's net price.
 */
import Big from 'big.js';
import type { InvoiceDetail } from '../invoices/schema';
import { currencyExponent } from '../money/currencies';
import { toMinor } from '../money/amount';

export interface Party {
  name: string;
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
  percent: string;
}

export interface VatBreakdown {
  category: string;
  percent: string;
  taxable: string;
  tax: string;
  exemptionReason: string | null;
}

export interface EnInvoice {
  number: string;
  issueDate: string;
  dueDate: string;
  currency: string;
  buyerReference: string | null;
  orderReference: string | null;
  note: string | null;
  seller: Party;
  buyer: Party;
  iban: string | null;
  bic: string | null;
  lines: Line[];
  vat: VatBreakdown[];
  /** BT-106, BT-109, BT-110, BT-112, BT-113, BT-114, BT-115. */
  totals: { lines: string; excludingTax: string; tax: string; includingTax: string; paid: string; rounding: string; payable: string };
}

/** Minor units written with the currency's decimals (a three-decimal currency's amounts, ending in 0, with two). */
export function amountText(minor: number, currency: string): string {
  const exponent = Math.min(currencyExponent(currency) ?? 2, 2);
  const units = currencyExponent(currency) === 3 ? minor / 10 : minor;
  return new Big(units).div(10 ** exponent).toFixed(exponent);
}

const minorOf = (amount: number, currency: string) => toMinor(amount, currency);
const percentText = (percentage: number) => new Big(percentage).toString();

function party(
  fields: { name: string; registration: string | null; vatId: string | null; peppolId: string | null; email: string | null; phone: string | null },
  address: { street: string | null; additionalStreet: string | null; city: string | null; postalCode: string | null; region: string | null; country: string },
): Party {
  const [scheme, ...id] = fields.peppolId?.split(':') ?? [];
  const endpoint = fields.peppolId ? { scheme, id: id.join(':') } : fields.email ? { scheme: 'EM', id: fields.email } : null;
  return { name: fields.name, registration: fields.registration, vatId: fields.vatId, endpoint, email: fields.email, phone: fields.phone, ...address };
}

/** The invoice in EN 16931's terms; `invoice` is issued and ready for the format (readiness.ts). */
export function toEnInvoice(invoice: InvoiceDetail): EnInvoice {
  const { currency, seller, buyer } = invoice;
  const money = (amount: number) => amountText(minorOf(amount, currency), currency);
  const rates = new Map(invoice.tax_breakdown.map((rate) => [rate.tax_rate_id, rate]));
  const lines = invoice.items.map((item, index): Line => {
    const rate = rates.get(item.tax_rate_ids[0])!;
    const negative = item.amount_excluding_tax < 0 || (item.amount_excluding_tax === 0 && item.unit_price < 0);
    const quantity = new Big(item.quantity).times(negative ? -1 : 1);
    const net = new Big(minorOf(item.amount_excluding_tax, currency));
    return {
      id: String(index + 1),
      name: item.description,
      quantity: quantity.toString(),
      netAmount: money(item.amount_excluding_tax),
      netPrice: net.div(quantity).div(10 ** (currencyExponent(currency) ?? 2)).round(6).toString(),
      category: rate.category,
      percent: percentText(rate.percentage),
    };
  });
  const merged = new Map<string, { category: string; percent: string; taxable: number; tax: number; exemptionReason: string | null }>();
  for (const rate of invoice.tax_breakdown) {
    const key = `${rate.category} ${rate.percentage}`;
    const entry = merged.get(key) ?? { category: rate.category, percent: percentText(rate.percentage), taxable: 0, tax: 0, exemptionReason: rate.exemption_reason };
    entry.taxable += minorOf(rate.taxable_amount, currency);
    entry.tax += minorOf(rate.tax_amount, currency);
    merged.set(key, entry);
  }
  const linesMinor = invoice.items.reduce((sum, item) => sum + minorOf(item.amount_excluding_tax, currency), 0);
  const includingTax = minorOf(invoice.total_excluding_tax, currency) + minorOf(invoice.total_tax, currency);
  return {
    number: invoice.number!,
    issueDate: invoice.issue_date,
    dueDate: invoice.due_date,
    currency,
    buyerReference: invoice.buyer_reference,
    orderReference: invoice.purchase_order,
    note: invoice.notes,
    seller: party(
      { name: seller.legal_name!, registration: seller.registration_number, vatId: seller.tax_id, peppolId: seller.peppol_id, email: seller.email, phone: seller.phone },
      { street: seller.address_line1, additionalStreet: seller.address_line2, city: seller.city, postalCode: seller.postal_code, region: seller.state, country: seller.country! },
    ),
    buyer: party(
      { name: buyer.company ?? buyer.name!, registration: null, vatId: buyer.tax_id, peppolId: buyer.peppol_id, email: buyer.email, phone: null },
      { street: firstLine(buyer.address), additionalStreet: otherLines(buyer.address), city: buyer.city, postalCode: buyer.postal_code, region: buyer.state, country: buyer.country! },
    ),
    iban: seller.iban,
    bic: seller.bic,
    lines,
    vat: [...merged.values()].map((entry) => ({ ...entry, taxable: amountText(entry.taxable, currency), tax: amountText(entry.tax, currency) })),
    totals: {
      lines: amountText(linesMinor, currency),
      excludingTax: money(invoice.total_excluding_tax),
      tax: money(invoice.total_tax),
      includingTax: amountText(includingTax, currency),
      paid: money(invoice.amount_paid),
      rounding: money(invoice.rounding_amount),
      payable: amountText(minorOf(invoice.total, currency) - minorOf(invoice.amount_paid, currency), currency),
    },
  };
}

function firstLine(address: string | null): string | null {
  return address?.split(/\r?\n/).map((line) => line.trim()).find(Boolean) ?? null;
}

function otherLines(address: string | null): string | null {
  const lines = address?.split(/\r?\n/).map((line) => line.trim()).filter(Boolean) ?? [];
  return lines.length > 1 ? lines.slice(1).join(', ') : null;
}
