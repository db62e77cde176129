/**
 * A WooCommerce order as a partner-API invoice, to the cent: WooCommerce money strings are parsed
 * into integer minor units (never floats), and the items must add up to the order's `total`.
 */
import { toMajor } from '../../server/money/amount';
import { currencyExponent } from '../../server/money/currencies';
import { WooOrder } from './order';

/** An order that cannot become an invoice; `reason` goes to the log with the order id. */
export class OrderRefused extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

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
}

export interface OrderInvoice {
  client: ClientInput;
  currency: string;
  issue_date?: string;
  items: InvoiceItem[];
  /** The order total in minor units, which the items add up to. */
  totalMinor: number;
  notes: string;
}

/** "12.50" → 1250 for a 2-decimal currency; extra decimals must be zeros ("12.5000"), else it is refused. */
export function parseMoney(value: string, exponent: number, field: string): bigint {
  const match = /^(-)?(\d+)(?:\.(\d+))?$/.exec(String(value).trim());
  if (!match) throw new OrderRefused(`${field} is not a decimal amount: ${JSON.stringify(value)}`);
  const [, sign, whole, fraction = ''] = match;
  if (/[1-9]/.test(fraction.slice(exponent))) throw new OrderRefused(`${field} has more decimals than the currency allows: ${value}`);
  const minor = BigInt(whole + fraction.slice(0, exponent).padEnd(exponent, '0'));
  return sign ? -minor : minor;
}

/** The marker in an invoice's notes that names its order: how a later run recognises the invoice. */
export function orderMarker(storeId: string, order: Pick<WooOrder, 'id'>): string {
  return `[woocommerce:${storeId}:order:${order.id}]`;
}

function clientOf(order: WooOrder): ClientInput {
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
  };
}

export function orderToInvoice(order: WooOrder, storeId: string): OrderInvoice {
  const currency = String(order.currency ?? '').toUpperCase();
  const exponent = currencyExponent(currency);
  if (exponent === undefined) throw new OrderRefused(`unknown currency ${JSON.stringify(order.currency)}`);
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
  const notes = [
    `WooCommerce order #${order.number}`,
    ...(coupons.length ? [`Coupons, already deducted from the lines: ${coupons.join(', ')}`] : []),
    orderMarker(storeId, order),
  ].join('\n');
  const completed = order.date_completed_gmt ?? order.date_created_gmt;
  return { client: clientOf(order), currency, ...(completed ? { issue_date: completed.slice(0, 10) } : {}), items, totalMinor: Number(total), notes };
}
