/**
 * A WooCommerce order as partner-API requests, to the cent: WooCommerce money strings are parsed
 * into integer minor units (never floats), and the items must add up to the order's `total`. The
 * order's identity travels in metadata; the notes carry only what the customer should read.
 */
import { toMajor } from '../../server/money/amount';
import { currencyExponent } from '../../server/money/currencies';
import { gmtTime, WooOrder } from './order';

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
}

export interface ClientInput {
  name: string;
  email: string;
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
  /** The order total in minor units, which the items add up to. */
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
  const match = /^(-)?(\d+)(?:\.(\d+))?$/.exec(String(value).trim());
  if (!match) throw new OrderRefused(`${field} is not a decimal amount: ${JSON.stringify(value)}`);
  const [, sign, whole, fraction = ''] = match;
  if (/[1-9]/.test(fraction.slice(exponent))) throw new OrderRefused(`${field} has more decimals than the currency allows: ${value}`);
  const minor = BigInt(whole + fraction.slice(0, exponent).padEnd(exponent, '0'));
  return sign ? -minor : minor;
}

/** The order's currency, upper-case, with its exponent; refused when the currency is unknown. */
export function currencyOf(order: Pick<WooOrder, 'currency'>): { currency: string; exponent: number } {
  const currency = String(order.currency ?? '').toUpperCase();
  const exponent = currencyExponent(currency);
  if (exponent === undefined) throw new OrderRefused(`unknown currency ${JSON.stringify(order.currency)}`);
  return { currency, exponent };
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

export function orderToInvoice(order: WooOrder, store: StoreIdentity): OrderInvoice {
  const { currency, exponent } = currencyOf(order);
  const money = (value: string, field: string) => parseMoney(value, exponent, field);
  const major = (minor: bigint) => toMajor(Number(minor), currency);

  const items: InvoiceItem[] = [];
  let sum = 0n;
  const add = (description: string, minor: bigint, quantity = 1) => {
    sum += minor;
    // A line whose total divides evenly keeps its quantity; otherwise it is one line of the exact total.
    const even = quantity > 1 && minor % BigInt(quantity) === 0n;
    items.push(
      even
        ? { description, quantity, unit_price: major(minor / BigInt(quantity)) }
        : { description: quantity === 1 ? description : `${description} × ${quantity}`, quantity: 1, unit_price: major(minor) },
    );
  };

  // Line totals are after coupons: the discount is already in them, so it is never subtracted again.
  for (const line of order.line_items ?? []) {
    const quantity = Number(line.quantity);
    if (!Number.isInteger(quantity) || quantity <= 0) throw new OrderRefused(`line item ${line.id} has quantity ${line.quantity}`);
    add(line.name, money(line.total, `line item ${line.id} total`), quantity);
  }
  for (const line of order.shipping_lines ?? []) add(`Shipping: ${line.method_title}`, money(line.total, `shipping line ${line.id} total`));
  for (const line of order.fee_lines ?? []) add(line.name, money(line.total, `fee line ${line.id} total`));
  for (const tax of order.tax_lines ?? []) {
    const amount = money(tax.tax_total, `tax line ${tax.id}`) + money(tax.shipping_tax_total, `tax line ${tax.id} shipping tax`);
    if (amount !== 0n) add(`Tax: ${tax.label || tax.rate_code}`, amount);
  }
  if (items.length === 0) throw new OrderRefused('the order has no lines');

  const total = money(order.total, 'order total');
  if (sum !== total) {
    throw new OrderRefused(`the order's lines, shipping, fees and taxes add up to ${major(sum)} ${currency}, not its total ${major(total)} ${currency}`);
  }
  if (total < 0n) throw new OrderRefused('the order total is negative');

  const coupons = (order.coupon_lines ?? []).map((c) => `${c.code} (−${c.discount})`);
  const notes = [`WooCommerce order #${order.number}`, ...(coupons.length ? [`Coupons, already deducted from the lines: ${coupons.join(', ')}`] : [])].join('\n');
  const completed = order.date_completed_gmt ?? order.date_created_gmt;
  return {
    client: clientOf(order, store),
    currency,
    ...(completed ? { issue_date: completed.slice(0, 10) } : {}),
    items,
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
