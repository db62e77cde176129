/**
 * Orders of the WooCommerce double: built from a few inputs with integer minor-unit arithmetic the
 * way WooCommerce totals a cart (prices exclusive of tax, tax rounded per line, coupons lowering line
 * totals), and rendered in the documented REST API v3 order shape, money as strings.
 */
import { randomBytes } from 'node:crypto';
import { code as currencyCode } from 'currency-codes';
import { wpDate } from './php';

/** Amounts are given in major units, as a decimal string ("12.50") or a number; never more decimals than the currency has. */
export type Money = string | number;

export type OrderStatus = 'pending' | 'processing' | 'on-hold' | 'completed' | 'cancelled' | 'refunded' | 'failed' | 'checkout-draft';
export const ORDER_STATUSES: OrderStatus[] = ['pending', 'processing', 'on-hold', 'completed', 'cancelled', 'refunded', 'failed', 'checkout-draft'];

/** wc_get_order_status_name(), for the notes WooCommerce writes on a status change. */
const STATUS_NAMES: Record<OrderStatus, string> = {
  pending: 'Pending payment',
  processing: 'Processing',
  'on-hold': 'On hold',
  completed: 'Completed',
  cancelled: 'Cancelled',
  refunded: 'Refunded',
  failed: 'Failed',
  'checkout-draft': 'Draft',
};

export interface Address {
  first_name: string;
  last_name: string;
  company: string;
  address_1: string;
  address_2: string;
  city: string;
  state: string;
  postcode: string;
  country: string;
}
export interface BillingAddress extends Address {
  email: string;
  phone: string;
}

export interface LineInput {
  name: string;
  quantity: number;
  /** Unit price, tax excluded. */
  price: Money;
  /** Percent, e.g. 20 or 5.5; no tax when absent. */
  taxRate?: number;
  sku?: string;
  product_id?: number;
}

export interface OrderInput {
  status?: OrderStatus;
  /** Defaults to the store's currency. */
  currency?: string;
  /** 0, the default, is a guest. */
  customer_id?: number;
  billing?: Partial<BillingAddress>;
  shippingAddress?: Partial<Address>;
  lines: LineInput[];
  shipping?: { title: string; total: Money; taxRate?: number; method_id?: string };
  /** A negative total is a discount given as a fee, as WooCommerce allows. */
  fees?: { name: string; total: Money; taxRate?: number }[];
  /** A percent coupon, or a fixed cart coupon of `amount`. */
  coupon?: { code: string; percent?: number; amount?: Money };
  refunds?: { amount: Money; reason?: string }[];
  payment_method?: string;
  payment_method_title?: string;
  transaction_id?: string;
  /**
   * The money is taken at the door: WooCommerce does not stamp date_paid when the order reaches
   * processing or completed (as in a store that filters woocommerce_payment_complete_order_status for
   * cash on delivery), until `store.markPaid()`.
   */
  paidOnDelivery?: boolean;
  customer_note?: string;
  meta_data?: { key: string; value: unknown }[];
  created_via?: string;
  date_created?: Date;
}

export interface MetaEntry {
  id: number;
  key: string;
  value: unknown;
}

/** A tax rate as WooCommerce > Settings > Tax would hold it; one per distinct percent in the store. */
export interface TaxRate {
  id: number;
  percent: number;
  label: string;
  rate_code: string;
}

interface TaxedAmount {
  rate?: TaxRate;
  total: number;
  tax: number;
}

interface StoredLine extends TaxedAmount {
  id: number;
  name: string;
  product_id: number;
  sku: string;
  quantity: number;
  subtotal: number;
  subtotalTax: number;
}

interface StoredShipping extends TaxedAmount {
  id: number;
  title: string;
  method_id: string;
}

interface StoredFee extends TaxedAmount {
  id: number;
  name: string;
}

/** The double's own record of an order: amounts in minor units, rendered on demand. */
export interface StoredOrder {
  id: number;
  orderKey: string;
  createdVia: string;
  status: OrderStatus;
  currency: string;
  decimals: number;
  dateCreated: Date;
  dateModified: Date;
  datePaid: Date | null;
  dateCompleted: Date | null;
  paidOnDelivery: boolean;
  customerId: number;
  customerNote: string;
  billing: BillingAddress;
  shipping: Address;
  paymentMethod: string;
  paymentMethodTitle: string;
  transactionId: string;
  meta: MetaEntry[];
  lines: StoredLine[];
  shippingLines: StoredShipping[];
  fees: StoredFee[];
  coupon?: { id: number; code: string; discount: number; discountTax: number };
  taxLineIds: Map<number, number>;
  refunds: { id: number; reason: string; amount: number }[];
}

export interface OrderNote {
  id: number;
  author: string;
  date_created: string;
  date_created_gmt: string;
  note: string;
  customer_note: boolean;
}

/** The ID sequences a WordPress database would hand out. */
export interface IdSource {
  post(): number;
  item(): number;
  meta(): number;
}

const PAID_STATUSES: OrderStatus[] = ['processing', 'completed'];
const EMPTY_ADDRESS: Address = { first_name: '', last_name: '', company: '', address_1: '', address_2: '', city: '', state: '', postcode: '', country: '' };

/** Dates in WooCommerce carry whole seconds: two saves within one second share a date_modified. */
export const wholeSeconds = (date: Date): Date => new Date(Math.floor(date.getTime() / 1000) * 1000);

export function currencyDecimals(currency: string): number {
  const found = currencyCode(currency);
  if (!found) throw new Error(`unknown currency ${currency}`);
  return found.digits;
}

/** "12.50" EUR → 1250: refuses more decimals than the currency has, so fixtures cannot hide rounding. */
export function toMinor(amount: Money, decimals: number): number {
  const text = typeof amount === 'number' ? String(amount) : amount.trim();
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m || (m[3] ?? '').length > decimals) throw new Error(`${amount} is not an amount with at most ${decimals} decimals`);
  const minor = Number(m[2]) * 10 ** decimals + Number((m[3] ?? '').padEnd(decimals, '0') || 0);
  return m[1] ? -minor : minor;
}

/** wc_format_decimal(x, dp): the currency's decimals, always written out ("12.50", JPY "1500"). */
export function formatMinor(minor: number, decimals: number): string {
  const sign = minor < 0 ? '-' : '';
  const digits = String(Math.abs(minor)).padStart(decimals + 1, '0');
  return decimals ? `${sign}${digits.slice(0, -decimals)}.${digits.slice(-decimals)}` : `${sign}${digits}`;
}

/** Per-line tax amounts are stored as PHP floats print them: "0.9", "46.76", "-1". */
function formatStored(minor: number, decimals: number): string {
  const fixed = formatMinor(minor, decimals);
  return fixed.includes('.') ? fixed.replace(/\.?0+$/, '') : fixed;
}

/** Percentages are held with 4 decimals (20 → 200000), as WooCommerce stores tax rates. */
const PERCENT_SCALE = 10_000n;
function scaledPercent(percent: number): bigint {
  const scaled = Math.round(percent * Number(PERCENT_SCALE));
  if (Math.abs(percent * Number(PERCENT_SCALE) - scaled) > 1e-6) throw new Error(`${percent}% has more than 4 decimals`);
  return BigInt(scaled);
}

/** PHP's round(): half away from zero. */
function divRound(numerator: bigint, denominator: bigint): number {
  const negative = numerator < 0n;
  const a = negative ? -numerator : numerator;
  let q = a / denominator;
  if ((a % denominator) * 2n >= denominator) q += 1n;
  return Number(negative ? -q : q);
}

function taxOf(amount: number, rate: TaxRate | undefined): number {
  return rate ? divRound(BigInt(amount) * scaledPercent(rate.percent), 100n * PERCENT_SCALE) : 0;
}

/**
 * WC_Discounts: each line gets the floor of its share, then what the whole cart should lose is
 * handed out one minor unit at a time (apply_coupon_remainder), never beyond a line's subtotal.
 */
function allocateDiscount(subtotals: number[], coupon: NonNullable<OrderInput['coupon']>, decimals: number): number[] {
  const cart = subtotals.reduce((a, b) => a + b, 0);
  let shares: number[];
  let target: number;
  if (coupon.percent !== undefined) {
    const pct = scaledPercent(coupon.percent);
    shares = subtotals.map((s) => Number((BigInt(s) * pct) / (100n * PERCENT_SCALE)));
    target = divRound(BigInt(cart) * pct, 100n * PERCENT_SCALE);
  } else if (coupon.amount !== undefined) {
    target = Math.min(toMinor(coupon.amount, decimals), cart);
    shares = subtotals.map((s) => (cart ? Number((BigInt(target) * BigInt(s)) / BigInt(cart)) : 0));
  } else {
    throw new Error(`coupon ${coupon.code} needs a percent or an amount`);
  }
  let remainder = target - shares.reduce((a, b) => a + b, 0);
  while (remainder > 0 && shares.some((d, i) => d < subtotals[i])) {
    for (let i = 0; i < shares.length && remainder > 0; i++) {
      if (shares[i] < subtotals[i]) {
        shares[i] += 1;
        remainder -= 1;
      }
    }
  }
  return shares;
}

export function buildOrder(input: OrderInput, storeCurrency: string, ids: IdSource, rateFor: (percent: number) => TaxRate, now: Date): StoredOrder {
  const currency = (input.currency ?? storeCurrency).toUpperCase();
  const decimals = currencyDecimals(currency);
  const minor = (m: Money) => toMinor(m, decimals);
  const rate = (percent?: number) => (percent ? rateFor(percent) : undefined);
  if (!input.lines.length) throw new Error('an order needs at least one line');

  const subtotals = input.lines.map((l) => {
    if (!Number.isInteger(l.quantity) || l.quantity < 1) throw new Error(`quantity ${l.quantity} of ${l.name} is not a positive integer`);
    return minor(l.price) * l.quantity;
  });
  const discounts = input.coupon ? allocateDiscount(subtotals, input.coupon, decimals) : subtotals.map(() => 0);
  const lines: StoredLine[] = input.lines.map((l, i) => {
    const r = rate(l.taxRate);
    const total = subtotals[i] - discounts[i];
    return {
      id: ids.item(),
      name: l.name,
      product_id: l.product_id ?? 0,
      sku: l.sku ?? '',
      quantity: l.quantity,
      rate: r,
      subtotal: subtotals[i],
      subtotalTax: taxOf(subtotals[i], r),
      total,
      tax: taxOf(total, r),
    };
  });
  const shippingLines: StoredShipping[] = input.shipping
    ? [shippingLine(input.shipping, ids.item(), minor(input.shipping.total), rate(input.shipping.taxRate))]
    : [];
  const fees: StoredFee[] = (input.fees ?? []).map((f) => {
    const r = rate(f.taxRate);
    const total = minor(f.total);
    return { id: ids.item(), name: f.name, rate: r, total, tax: taxOf(total, r) };
  });
  const created = wholeSeconds(input.date_created ?? now);
  const status = input.status ?? 'pending';
  const order: StoredOrder = {
    id: ids.post(),
    orderKey: `wc_order_${randomBytes(10).toString('base64url').replace(/[-_]/g, 'x').slice(0, 13)}`,
    createdVia: input.created_via ?? 'checkout',
    status,
    currency,
    decimals,
    dateCreated: created,
    dateModified: created,
    datePaid: PAID_STATUSES.includes(status) && !input.paidOnDelivery ? created : null,
    dateCompleted: status === 'completed' ? created : null,
    paidOnDelivery: input.paidOnDelivery ?? false,
    customerId: input.customer_id ?? 0,
    customerNote: input.customer_note ?? '',
    billing: { ...EMPTY_ADDRESS, email: '', phone: '', ...input.billing },
    shipping: { ...EMPTY_ADDRESS, ...input.shippingAddress },
    paymentMethod: input.payment_method ?? 'bacs',
    paymentMethodTitle: input.payment_method_title ?? 'Direct bank transfer',
    transactionId: input.transaction_id ?? '',
    meta: (input.meta_data ?? []).map((m) => ({ id: ids.meta(), key: m.key, value: m.value })),
    lines,
    shippingLines,
    fees,
    taxLineIds: new Map(),
    refunds: [],
  };
  if (input.coupon) {
    const discount = discounts.reduce((a, b) => a + b, 0);
    const discountTax = lines.reduce((sum, l) => sum + l.subtotalTax - l.tax, 0);
    order.coupon = { id: ids.item(), code: input.coupon.code, discount, discountTax };
  }
  for (const r of taxRatesOf(order)) order.taxLineIds.set(r.id, ids.item());
  for (const refund of input.refunds ?? []) order.refunds.unshift({ id: ids.post(), reason: refund.reason ?? '', amount: minor(refund.amount) });
  return order;
}

function shippingLine(input: NonNullable<OrderInput['shipping']>, id: number, total: number, rate: TaxRate | undefined): StoredShipping {
  return { id, title: input.title, method_id: input.method_id ?? 'flat_rate', rate, total, tax: taxOf(total, rate) };
}

function taxRatesOf(order: StoredOrder): TaxRate[] {
  const rates = new Map<number, TaxRate>();
  for (const item of [...order.lines, ...order.shippingLines, ...order.fees]) if (item.rate) rates.set(item.rate.id, item.rate);
  return [...rates.values()].sort((a, b) => a.id - b.id);
}

/** The order-level totals WooCommerce derives from the items (WC_Abstract_Order::calculate_totals). */
export function totalsOf(order: StoredOrder) {
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const cartTax = sum(order.lines.map((l) => l.tax)) + sum(order.fees.map((f) => f.tax));
  const shippingTax = sum(order.shippingLines.map((s) => s.tax));
  const shippingTotal = sum(order.shippingLines.map((s) => s.total));
  const total = sum(order.lines.map((l) => l.total)) + shippingTotal + sum(order.fees.map((f) => f.total)) + cartTax + shippingTax;
  return {
    discountTotal: order.coupon?.discount ?? 0,
    discountTax: order.coupon?.discountTax ?? 0,
    shippingTotal,
    shippingTax,
    cartTax,
    totalTax: cartTax + shippingTax,
    total,
    refunded: sum(order.refunds.map((r) => r.amount)),
  };
}

/** What a status change does to an order besides the status: paid and completed dates, and a note. */
export function statusTransitionNote(from: OrderStatus, to: OrderStatus): string {
  return `Order status changed from ${STATUS_NAMES[from]} to ${STATUS_NAMES[to]}.`;
}
/** WC_Order::set_status(): maybe_set_date_paid() stamps the first paid status reached, maybe_set_date_completed() every completion. */
export function applyStatus(order: StoredOrder, to: OrderStatus, at: Date): void {
  order.status = to;
  if (PAID_STATUSES.includes(to) && !order.datePaid && !order.paidOnDelivery) order.datePaid = at;
  if (to === 'completed') order.dateCompleted = at;
}

/** The v3 order as GET /wp-json/wc/v3/orders/{id} (and an order webhook) carries it. */
export function renderOrder(order: StoredOrder, restUrl: string, offsetMinutes: number) {
  const money = (m: number) => formatMinor(m, order.decimals);
  const stored = (m: number) => formatStored(m, order.decimals);
  const local = (d: Date | null) => (d ? wpDate(d, offsetMinutes) : null);
  const gmt = (d: Date | null) => (d ? wpDate(d, 0) : null);
  const taxes = (item: TaxedAmount, subtotalTax?: number) =>
    item.rate ? [{ id: item.rate.id, total: stored(item.tax), subtotal: subtotalTax === undefined ? '' : stored(subtotalTax) }] : [];
  const t = totalsOf(order);
  const rates = taxRatesOf(order);
  return {
    id: order.id,
    parent_id: 0,
    number: String(order.id),
    order_key: order.orderKey,
    created_via: order.createdVia,
    version: WC_VERSION,
    status: order.status,
    currency: order.currency,
    date_created: local(order.dateCreated),
    date_created_gmt: gmt(order.dateCreated),
    date_modified: local(order.dateModified),
    date_modified_gmt: gmt(order.dateModified),
    discount_total: money(t.discountTotal),
    discount_tax: money(t.discountTax),
    shipping_total: money(t.shippingTotal),
    shipping_tax: money(t.shippingTax),
    cart_tax: money(t.cartTax),
    total: money(t.total),
    total_tax: money(t.totalTax),
    prices_include_tax: false,
    customer_id: order.customerId,
    customer_ip_address: order.createdVia === 'checkout' ? '203.0.113.7' : '',
    customer_user_agent: order.createdVia === 'checkout' ? 'mozilla/5.0 (x11; linux x86_64; rv:128.0) gecko/20100101 firefox/128.0' : '',
    customer_note: order.customerNote,
    billing: { ...order.billing },
    shipping: { ...order.shipping },
    payment_method: order.paymentMethod,
    payment_method_title: order.paymentMethodTitle,
    transaction_id: order.transactionId,
    date_paid: local(order.datePaid),
    date_paid_gmt: gmt(order.datePaid),
    date_completed: local(order.dateCompleted),
    date_completed_gmt: gmt(order.dateCompleted),
    cart_hash: '',
    meta_data: order.meta.map((m) => ({ id: m.id, key: m.key, value: m.value })),
    line_items: order.lines.map((l) => ({
      id: l.id,
      name: l.name,
      product_id: l.product_id,
      variation_id: 0,
      quantity: l.quantity,
      tax_class: '',
      subtotal: money(l.subtotal),
      subtotal_tax: money(l.subtotalTax),
      total: money(l.total),
      total_tax: money(l.tax),
      taxes: taxes(l, l.subtotalTax),
      meta_data: [],
      sku: l.sku,
      // WooCommerce divides the line total (after discounts) by the quantity and prints a PHP number.
      price: l.total / 10 ** order.decimals / l.quantity,
    })),
    tax_lines: rates.map((r) => ({
      id: order.taxLineIds.get(r.id)!,
      rate_code: r.rate_code,
      rate_id: r.id,
      label: r.label,
      compound: false,
      tax_total: money([...order.lines, ...order.fees].filter((i) => i.rate?.id === r.id).reduce((s, i) => s + i.tax, 0)),
      shipping_tax_total: money(order.shippingLines.filter((i) => i.rate?.id === r.id).reduce((s, i) => s + i.tax, 0)),
      rate_percent: r.percent,
      meta_data: [],
    })),
    shipping_lines: order.shippingLines.map((s) => ({
      id: s.id,
      method_title: s.title,
      method_id: s.method_id,
      total: money(s.total),
      total_tax: money(s.tax),
      taxes: taxes(s),
      meta_data: [],
    })),
    fee_lines: order.fees.map((f) => ({
      id: f.id,
      name: f.name,
      tax_class: '',
      tax_status: f.rate ? 'taxable' : 'none',
      total: money(f.total),
      total_tax: money(f.tax),
      taxes: taxes(f),
      meta_data: [],
    })),
    coupon_lines: order.coupon
      ? [{ id: order.coupon.id, code: order.coupon.code, discount: money(order.coupon.discount), discount_tax: money(order.coupon.discountTax), meta_data: [] }]
      : [],
    refunds: order.refunds.map((r) => ({ id: r.id, reason: r.reason, total: money(-r.amount) })),
    _links: {
      self: [{ href: `${restUrl}/orders/${order.id}` }],
      collection: [{ href: `${restUrl}/orders` }],
      ...(order.customerId ? { customer: [{ href: `${restUrl}/customers/${order.customerId}` }] } : {}),
    },
  };
}

export type WooOrder = ReturnType<typeof renderOrder>;

/** The WooCommerce and WordPress versions the double claims to be, in orders, headers and the system status. */
export const WC_VERSION = '9.8.5';
export const WP_VERSION = '6.8.1';
