/**
 * A WooCommerce order as partner-API requests, to the cent: WooCommerce money strings are parsed
 * into integer minor units (never floats), and the items must add up to the order's `total`. The
 * order's identity travels in metadata; the notes carry only what the customer should read.
 */
import { toMajor, toMinor } from '../../server/money/amount';
import { excludingInclusiveTax, taxAt, toPercentageUnits } from '../../server/money/tax';
import { currencyExponent } from '../../server/money/currencies';
import { gmtTime, WooOrder, WooTaxedItem } from './order';
import type { Invoice } from './partner';

/** An order that cannot become an invoice; `reason` goes to the log and to a note on the order. */
export class OrderRefused extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** Which store an order belongs to: its URL names it in metadata, its short hash in idempotency keys. */
export interface StoreIdentity {
  url: string;
  id: string;
}

export type Metadata = Record<string, string>;

export interface InvoiceItem {
  description: string;
  quantity: number;
  unit_price: number;
  /** The line's rates (ours, for the shop's), and the tax the shop computed for each. */
  tax_rate_ids: number[];
  tax_amounts?: { tax_rate_id: number; amount: number }[];
}

/** A shop tax rate an order uses: the bridge keeps one tax rate of ours per store and `key`. */
export interface ShopRate {
  /** The shop's rate id (the items' `taxes[].id`). */
  id: number;
  /** The shop's rate id and percentage: a rate whose percentage the shop changed is another of ours (ours never change). */
  key: string;
  label: string;
  percentage: number;
}

export interface ClientInput {
  name: string;
  email: string;
  /** A B2B order's VAT number (see reverseChargeOf). */
  tax_id?: string;
  phone?: string;
  company?: string;
  address?: string;
  /** Applied only when the client is created: a client found by e-mail keeps its own. */
  metadata: Metadata;
}

export interface OrderInvoice {
  client: ClientInput;
  currency: string;
  issue_date?: string;
  items: InvoiceItem[];
  /** `reverse` for a B2B order under reverse charge (the buyer accounts for the VAT). */
  tax_exempt?: 'reverse';
  /** What the shop's total and the sum of its rounded line taxes differ by (a shop that rounds at subtotal), in major units. */
  rounding_amount?: number;
  /** The order total in minor units, which the items and their taxes add up to. */
  totalMinor: number;
  notes: string;
  metadata: Metadata;
}

export type PaymentMethod = 'bank_transfer' | 'cash' | 'card' | 'check' | 'other';

export interface OrderPayment {
  method: PaymentMethod;
  reference: string;
  paid_at: string;
  metadata: Metadata;
}

/** Gateways that take cards, by their WooCommerce ids; a gateway's other methods (SEPA, wallets…) have ids of their own. */
const CARD_GATEWAYS = [
  'stripe',
  'stripe_cc',
  'woocommerce_payments',
  'square_credit_card',
  'braintree_credit_card',
  'ppcp-credit-card-gateway',
  'authorize_net_cim_credit_card',
  'mollie_wc_gateway_creditcard',
  'eway',
  'paypal_pro',
];

const OFFLINE_GATEWAYS: Record<string, PaymentMethod> = { bacs: 'bank_transfer', cod: 'cash', cheque: 'check' };

/** The API's limits on a metadata value and on a payment's reference. */
const MAX_METADATA_VALUE = 500;
const MAX_REFERENCE = 255;

/** "12.50" → 1250 for a 2-decimal currency; extra decimals must be zeros ("12.5000"), else it is refused. */
export function parseMoney(value: string, exponent: number, field: string): bigint {
  return parseDecimal(value, exponent, field, 'refuse');
}

/** A decimal string in minor units; digits past the currency's are refused, or rounded half away from zero as PHP's round() does. */
function parseDecimal(value: string, exponent: number, field: string, extraDigits: 'refuse' | 'round'): bigint {
  const match = /^(-)?(\d+)(?:\.(\d+))?$/.exec(String(value).trim());
  if (!match) throw new OrderRefused(`${field} is not a decimal amount: ${JSON.stringify(value)}`);
  const [, sign, whole, fraction = ''] = match;
  if (extraDigits === 'refuse' && /[1-9]/.test(fraction.slice(exponent))) throw new OrderRefused(`${field} has more decimals than the currency allows: ${value}`);
  let minor = BigInt(whole + fraction.slice(0, exponent).padEnd(exponent, '0'));
  if (extraDigits === 'round' && Number(fraction[exponent] ?? '0') >= 5) minor += 1n;
  return sign ? -minor : minor;
}

/** The order's currency, upper-case, with its exponent; refused when the currency is unknown. */
export function currencyOf(order: Pick<WooOrder, 'currency'>): { currency: string; exponent: number } {
  const currency = String(order.currency ?? '').toUpperCase();
  const exponent = currencyExponent(currency);
  if (exponent === undefined) throw new OrderRefused(`unknown currency ${JSON.stringify(order.currency)}`);
  return { currency, exponent };
}

/**
 * A tax as WooCommerce stores it per item and rate, which may have more decimals than the currency
 * ("2.3655" when the shop rounds at subtotal), rounded half away from zero to minor units as
 * WooCommerce rounds (PHP's round()); an empty value is no tax.
 */
export function parseRawTax(value: string, exponent: number, field: string): bigint {
  return String(value ?? '').trim() === '' ? 0n : parseDecimal(value, exponent, field, 'round');
}

/**
 * The shop rates the order's tax lines name. A compound rate (tax on tax) is refused: the invoice's
 * rates are each applied to the line amount.
 */
export function shopRatesOf(order: Pick<WooOrder, 'tax_lines'>): ShopRate[] {
  return (order.tax_lines ?? []).map((line) => {
    if (line.compound) throw new OrderRefused(`tax line ${line.id} (${line.label}) is a compound rate, which invoices do not take`);
    const percentage = Number(line.rate_percent);
    if (line.rate_percent === undefined || !Number.isFinite(percentage) || percentage < 0 || percentage > 100) {
      throw new OrderRefused(`tax line ${line.id} (${line.label}) gives no rate_percent between 0 and 100`);
    }
    return { id: line.rate_id, key: `${line.rate_id}:${percentage}`, label: (line.label || line.rate_code || `Tax ${percentage} %`).slice(0, 100), percentage };
  });
}

/** A line of a credit note: an invoice line credited in full, or a line of its own. */
export type CreditLine = { invoice_item_id: number } | { description: string; quantity: number; unit_price: number; tax_rate_ids: number[] };

/**
 * The credit note lines for a shop refund of `refundMinor` on the order's invoice, so that the
 * credit corrects the invoice's tax as well as its total:
 * - a refund of the whole of an invoice not credited yet credits each of its lines (their taxes
 *   exactly as invoiced, the credit exactly its total);
 * - otherwise, on an invoice of one (exclusive) rate, one line at the amount without tax that,
 *   with its tax at that rate, makes the refund exactly;
 * - otherwise (several rates, or no such amount) one line without tax: a refund of an amount names
 *   no items, so how it splits between rates is not known.
 */
export function refundLines(invoice: Pick<Invoice, 'items' | 'tax_breakdown' | 'total' | 'amount_credited' | 'currency'>, refundMinor: bigint, description: string): CreditLine[] {
  const { currency } = invoice;
  const refund = Number(refundMinor);
  if (refund === toMinor(invoice.total, currency) && !invoice.amount_credited && invoice.items?.length) return invoice.items.map((item) => ({ invoice_item_id: item.id }));
  const own = (minor: number, taxRateIds: number[]) => [{ description, quantity: 1, unit_price: toMajor(minor, currency), tax_rate_ids: taxRateIds }];
  const rates = invoice.tax_breakdown ?? [];
  if (rates.length !== 1 || rates[0].inclusive) return own(refund, []);
  // The tax engine's own arithmetic: the amount a gross price holds without its tax, and the tax on it.
  const units = toPercentageUnits(rates[0].percentage);
  const guess = excludingInclusiveTax(refund, units);
  for (const net of [guess - 1, guess, guess + 1]) if (net > 0 && net + taxAt(net, units) === refund) return own(net, [rates[0].tax_rate_id]);
  return own(refund, []);
}

/** Where the buyer's VAT number is in an order's meta by default (the EU VAT plugins' and WooCommerce's own field). */
export const DEFAULT_VAT_META_KEY = '_billing_vat_number';

/**
 * The VAT number of a B2B order under reverse charge: one in the order's meta (`vatMetaKey`) on an
 * order that charged no tax. Null for any other order (a VAT number with VAT charged is a domestic
 * B2B sale, taxed as the shop taxed it).
 */
export function reverseChargeOf(order: Pick<WooOrder, 'meta_data' | 'total_tax' | 'currency'>, vatMetaKey: string): string | null {
  const entry = (order.meta_data ?? []).find((meta) => meta.key === vatMetaKey);
  const vatNumber = typeof entry?.value === 'string' ? entry.value.replace(/[\s.-]/g, '').toUpperCase() : '';
  if (!vatNumber) return null;
  const { exponent } = currencyOf(order);
  return parseRawTax(order.total_tax, exponent, 'order total_tax') === 0n ? vatNumber : null;
}

/** What the shop has refunded of the order so far, in minor units (refunds are listed as negative totals). */
export function refundedMinor(order: Pick<WooOrder, 'currency' | 'refunds'>): bigint {
  const { exponent } = currencyOf(order);
  return (order.refunds ?? []).reduce((sum, refund) => {
    const amount = parseMoney(refund.total, exponent, `refund ${refund.id}`);
    return sum + (amount < 0n ? -amount : amount);
  }, 0n);
}

/**
 * The marker the earlier bridge wrote into an invoice's notes to name its order. Invoices are now
 * found by metadata; the marker still finds those made before the upgrade.
 */
export function legacyOrderMarker(storeId: string, order: Pick<WooOrder, 'id'>): string {
  return `[woocommerce:${storeId}:order:${order.id}]`;
}

/** The invoice's metadata that names its order: how the bridge finds it again. */
export function orderMetadata(store: StoreIdentity, order: Pick<WooOrder, 'id'>): Metadata {
  return { wc_store: store.url, wc_order_id: String(order.id) };
}

function clientOf(order: WooOrder, store: StoreIdentity): ClientInput {
  const b = order.billing ?? {};
  const email = (b.email ?? '').trim();
  if (!email) throw new OrderRefused('the order has no billing e-mail to send the invoice to');
  const person = [b.first_name, b.last_name].map((s) => (s ?? '').trim()).filter(Boolean).join(' ');
  const company = (b.company ?? '').trim();
  const address = [b.address_1, b.address_2, [b.postcode, b.city].filter(Boolean).join(' '), b.state, b.country]
    .map((s) => (s ?? '').trim())
    .filter(Boolean)
    .join(', ');
  return {
    name: person || company || email,
    email,
    ...(b.phone?.trim() ? { phone: b.phone.trim() } : {}),
    ...(company ? { company } : {}),
    ...(address ? { address } : {}),
    // A guest (customer_id 0) has no account to name.
    metadata: { wc_store: store.url, ...(order.customer_id > 0 ? { wc_customer_id: String(order.customer_id) } : {}) },
  };
}

/**
 * The order as an invoice: each line, shipping line and fee at its total without tax (WooCommerce's
 * line totals are without tax whether the shop enters prices with or without it), with our tax rate
 * for each shop rate on it (`rateIds`: shop rate id → ours) and the tax the shop computed for it, so
 * the invoice's tax per rate is the shop's. Where the shop's total and its rounded line taxes differ
 * (a shop that rounds tax at subtotal), the difference is the invoice's `rounding_amount`.
 */
export function orderToInvoice(
  order: WooOrder,
  store: StoreIdentity,
  rateIds: ReadonlyMap<number, number>,
  /** The reverse-charge rate of ours and the buyer's VAT number, for a B2B order under reverse charge (reverseChargeOf). */
  reverseCharge?: { rateId: number; vatNumber: string },
): OrderInvoice {
  const { currency, exponent } = currencyOf(order);
  const money = (value: string, field: string) => parseMoney(value, exponent, field);
  const major = (minor: bigint) => toMajor(Number(minor), currency);

  const items: InvoiceItem[] = [];
  let sum = 0n;
  const add = (description: string, item: WooTaxedItem, field: string, quantity = 1) => {
    const minor = money(item.total, `${field} total`);
    // An order under reverse charge charged no tax: its lines' (zero) shop taxes give way to the reverse-charge rate.
    const taxes = reverseCharge ? [] : (item.taxes ?? []).filter((tax) => String(tax.total ?? '').trim() !== '');
    const tax_amounts = taxes.map((tax) => {
      const ours = rateIds.get(tax.id);
      if (ours === undefined) throw new OrderRefused(`${field} is taxed at shop rate ${tax.id}, which no tax line of the order names`);
      const amount = parseRawTax(tax.total, exponent, `${field} tax`);
      sum += amount;
      return { tax_rate_id: ours, amount: major(amount) };
    });
    sum += minor;
    // Under reverse charge every line is on the reverse-charge rate, and no tax is charged.
    const taxed = reverseCharge
      ? { tax_rate_ids: [reverseCharge.rateId] }
      : { tax_rate_ids: tax_amounts.map((tax) => tax.tax_rate_id), ...(tax_amounts.length ? { tax_amounts } : {}) };
    // A line whose total divides evenly keeps its quantity; otherwise it is one line of the exact total.
    const even = quantity > 1 && minor % BigInt(quantity) === 0n;
    items.push(
      even
        ? { description, quantity, unit_price: major(minor / BigInt(quantity)), ...taxed }
        : { description: quantity === 1 ? description : `${description} × ${quantity}`, quantity: 1, unit_price: major(minor), ...taxed },
    );
  };

  // Line totals are after coupons: the discount is already in them, so it is never subtracted again.
  for (const line of order.line_items ?? []) {
    const quantity = Number(line.quantity);
    if (!Number.isInteger(quantity) || quantity <= 0) throw new OrderRefused(`line item ${line.id} has quantity ${line.quantity}`);
    add(line.name, line, `line item ${line.id}`, quantity);
  }
  for (const line of order.shipping_lines ?? []) add(`Shipping: ${line.method_title}`, line, `shipping line ${line.id}`);
  for (const line of order.fee_lines ?? []) add(line.name, line, `fee line ${line.id}`);
  if (items.length === 0) throw new OrderRefused('the order has no lines');

  const total = money(order.total, 'order total');
  if (total < 0n) throw new OrderRefused('the order total is negative');
  // The API takes a rounding of at most one minor unit per line: more is not rounding.
  const rounding = total - sum;
  if (rounding > BigInt(items.length) || -rounding > BigInt(items.length)) {
    throw new OrderRefused(`the order's lines, shipping, fees and their taxes add up to ${major(sum)} ${currency}, not its total ${major(total)} ${currency}`);
  }

  const coupons = (order.coupon_lines ?? []).map((c) => `${c.code} (−${c.discount})`);
  const notes = [`WooCommerce order #${order.number}`, ...(coupons.length ? [`Coupons, already deducted from the lines: ${coupons.join(', ')}`] : [])].join('\n');
  const completed = order.date_completed_gmt ?? order.date_created_gmt;
  const client = clientOf(order, store);
  return {
    client: reverseCharge ? { ...client, tax_id: reverseCharge.vatNumber } : client,
    currency,
    ...(reverseCharge ? { tax_exempt: 'reverse' as const } : {}),
    ...(completed ? { issue_date: completed.slice(0, 10) } : {}),
    items,
    ...(rounding !== 0n ? { rounding_amount: major(rounding) } : {}),
    totalMinor: Number(total),
    notes,
    metadata: orderMetadata(store, order),
  };
}

/**
 * The payment the shop took for a paid order (`date_paid_gmt` set), as a payment received elsewhere:
 * the gateway's method, its transaction id (else the order number) as the reference, its title in
 * the metadata. `now` bounds the payment date: the API refuses a date in the future, and the store's
 * clock may run ahead of ours.
 */
export function orderToPayment(order: WooOrder, store: StoreIdentity, now: Date): OrderPayment | null {
  const paid = gmtTime(order.date_paid_gmt);
  if (Number.isNaN(paid)) return null;
  const gateway = order.payment_method ?? '';
  const title = (order.payment_method_title ?? '').trim();
  return {
    method: OFFLINE_GATEWAYS[gateway] ?? (CARD_GATEWAYS.includes(gateway) ? 'card' : 'other'),
    reference: (order.transaction_id?.trim() || order.number).slice(0, MAX_REFERENCE),
    paid_at: new Date(Math.min(paid, now.getTime())).toISOString(),
    metadata: {
      ...orderMetadata(store, order),
      ...(gateway ? { wc_payment_method: gateway.slice(0, MAX_METADATA_VALUE) } : {}),
      ...(title ? { wc_payment_method_title: title.slice(0, MAX_METADATA_VALUE) } : {}),
    },
  };
}
