/**
 * Orders of the WooCommerce double: built from a few inputs with integer arithmetic the way
 * WooCommerce totals a cart (WC_Cart_Totals), and rendered in the documented REST API v3 order
 * shape, money as strings:
 * - product prices entered without tax (the default) or with it (`prices_include_tax`): a line's
 *   `total` is without tax either way, its tax taken out of the price entered (WC_Tax::calc_inclusive_tax);
 *   shipping and fees are always entered without tax;
 * - tax rounded per line (the default) or at subtotal (`woocommerce_tax_round_at_subtotal`): then
 *   each line keeps its tax unrounded to the rounding precision (the currency's decimals + 4), the
 *   REST `taxes[].total` prints it raw ("2.3655"), `total_tax` rounds it, and each rate's total is
 *   rounded once (the order's tax lines, and its total);
 * - coupons lowering line totals (modelled for prices without tax only).
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
  /** The store's tax settings when the order was placed (WooCommerce > Settings > Tax). */
  pricesIncludeTax?: boolean;
  roundTaxAtSubtotal?: boolean;
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

/**
 * An amount and its tax in rounding-precision units (minor units × 10 000, WooCommerce's
 * wc_get_rounding_precision()): whole minor units unless the shop rounds at subtotal (tax) or
 * enters prices with tax (the total that is left once the tax is taken out).
 */
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
  pricesIncludeTax: boolean;
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

/** Rounding-precision units per minor unit. */
const PRECISION = 10_000;

/** PHP's round(): half away from zero. */
function divRound(numerator: bigint, denominator: bigint): number {
  const negative = numerator < 0n;
  const a = negative ? -numerator : numerator;
  let q = a / denominator;
  if ((a % denominator) * 2n >= denominator) q += 1n;
  return Number(negative ? -q : q);
}

/** Precision units to whole minor units, as wc_round_tax_total() and wc_format_decimal(dp) round. */
function toWhole(precise: number): number {
  return divRound(BigInt(precise), BigInt(PRECISION));
}

interface TaxSettings {
  inclusive: boolean;
  atSubtotal: boolean;
}

/**
 * An amount of `minor` units as entered, taxed at `rate` (WC_Tax::calc_tax): its total without tax
 * and its tax, in precision units. The tax is rounded to the minor unit unless the shop rounds at subtotal.
 */
function taxed(minor: number, rate: TaxRate | undefined, { inclusive, atSubtotal }: TaxSettings): { total: number; tax: number } {
  const precise = BigInt(minor) * BigInt(PRECISION);
  if (!rate) return { total: Number(precise), tax: 0 };
  const percent = scaledPercent(rate.percent);
  const exact = inclusive ? divRound(precise * percent, 100n * PERCENT_SCALE + percent) : divRound(precise * percent, 100n * PERCENT_SCALE);
  const tax = atSubtotal ? exact : toWhole(exact) * PRECISION;
  return { total: inclusive ? Number(precise) - tax : Number(precise), tax };
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
  // A rate of 0 % is a rate (zero rated); no taxRate is no tax at all.
  const rate = (percent?: number) => (percent === undefined ? undefined : rateFor(percent));
  if (!input.lines.length) throw new Error('an order needs at least one line');
  if (input.pricesIncludeTax && input.coupon) throw new Error('coupons on prices entered with tax are not modelled by the double');
  const products: TaxSettings = { inclusive: Boolean(input.pricesIncludeTax), atSubtotal: Boolean(input.roundTaxAtSubtotal) };
  // Shipping costs and fees are entered without tax whatever the product prices are.
  const extras: TaxSettings = { inclusive: false, atSubtotal: products.atSubtotal };

  const subtotals = input.lines.map((l) => {
    if (!Number.isInteger(l.quantity) || l.quantity < 1) throw new Error(`quantity ${l.quantity} of ${l.name} is not a positive integer`);
    return minor(l.price) * l.quantity;
  });
  const discounts = input.coupon ? allocateDiscount(subtotals, input.coupon, decimals) : subtotals.map(() => 0);
  const lines: StoredLine[] = input.lines.map((l, i) => {
    const r = rate(l.taxRate);
    const subtotal = taxed(subtotals[i], r, products);
    return {
      id: ids.item(),
      name: l.name,
      product_id: l.product_id ?? 0,
      sku: l.sku ?? '',
      quantity: l.quantity,
      rate: r,
      subtotal: subtotal.total,
      subtotalTax: subtotal.tax,
      ...taxed(subtotals[i] - discounts[i], r, products),
    };
  });
  const shippingLines: StoredShipping[] = input.shipping
    ? [{ id: ids.item(), title: input.shipping.title, method_id: input.shipping.method_id ?? 'flat_rate', rate: rate(input.shipping.taxRate), ...taxed(minor(input.shipping.total), rate(input.shipping.taxRate), extras) }]
    : [];
  const fees: StoredFee[] = (input.fees ?? []).map((f) => {
    const r = rate(f.taxRate);
    return { id: ids.item(), name: f.name, rate: r, ...taxed(minor(f.total), r, extras) };
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
    pricesIncludeTax: products.inclusive,
  };
  if (input.coupon) {
    const discount = discounts.reduce((a, b) => a + b, 0);
    const discountTax = toWhole(lines.reduce((sum, l) => sum + l.subtotalTax - l.tax, 0));
    order.coupon = { id: ids.item(), code: input.coupon.code, discount, discountTax };
  }
  for (const r of taxRatesOf(order)) order.taxLineIds.set(r.id, ids.item());
  for (const refund of input.refunds ?? []) order.refunds.unshift({ id: ids.post(), reason: refund.reason ?? '', amount: minor(refund.amount) });
  return order;
}

function taxRatesOf(order: StoredOrder): TaxRate[] {
  const rates = new Map<number, TaxRate>();
  for (const item of [...order.lines, ...order.shippingLines, ...order.fees]) if (item.rate) rates.set(item.rate.id, item.rate);
  return [...rates.values()].sort((a, b) => a.id - b.id);
}

/** Each rate's tax on the order's products and fees, and on its shipping, rounded once per rate (WC_Order::update_taxes). */
function rateTotals(order: StoredOrder, rate: TaxRate): { cart: number; shipping: number } {
  const of = (items: TaxedAmount[]) => toWhole(items.filter((i) => i.rate?.id === rate.id).reduce((s, i) => s + i.tax, 0));
  return { cart: of([...order.lines, ...order.fees]), shipping: of(order.shippingLines) };
}

/** The order-level totals WooCommerce derives from the items (WC_Abstract_Order::calculate_totals). */
export function totalsOf(order: StoredOrder) {
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const perRate = taxRatesOf(order).map((rate) => rateTotals(order, rate));
  const cartTax = sum(perRate.map((r) => r.cart));
  const shippingTax = sum(perRate.map((r) => r.shipping));
  const shippingTotal = toWhole(sum(order.shippingLines.map((s) => s.total)));
  // The items' totals may carry part of a minor unit (prices entered with tax): the sum is rounded once.
  const total = toWhole(sum([...order.lines, ...order.shippingLines, ...order.fees].map((i) => i.total))) + cartTax + shippingTax;
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
  const precise = (p: number) => toWhole(p);
  // A tax as stored: to the rounding precision, as PHP prints a float ("2.3655", "46.76", "-1").
  const stored = (p: number) => formatStored(p, order.decimals + 4);
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
    prices_include_tax: order.pricesIncludeTax,
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
      subtotal: money(precise(l.subtotal)),
      subtotal_tax: money(precise(l.subtotalTax)),
      total: money(precise(l.total)),
      total_tax: money(precise(l.tax)),
      taxes: taxes(l, l.subtotalTax),
      meta_data: [],
      sku: l.sku,
      // WooCommerce divides the line total (after discounts) by the quantity and prints a PHP number.
      price: l.total / PRECISION / 10 ** order.decimals / l.quantity,
    })),
    tax_lines: rates.map((r) => ({
      id: order.taxLineIds.get(r.id)!,
      rate_code: r.rate_code,
      rate_id: r.id,
      label: r.label,
      compound: false,
      tax_total: money(rateTotals(order, r).cart),
      shipping_tax_total: money(rateTotals(order, r).shipping),
      rate_percent: r.percent,
      meta_data: [],
    })),
    shipping_lines: order.shippingLines.map((s) => ({
      id: s.id,
      method_title: s.title,
      method_id: s.method_id,
      total: money(precise(s.total)),
      total_tax: money(precise(s.tax)),
      taxes: taxes(s),
      meta_data: [],
    })),
    fee_lines: order.fees.map((f) => ({
      id: f.id,
      name: f.name,
      tax_class: '',
      tax_status: f.rate ? 'taxable' : 'none',
      total: money(precise(f.total)),
      total_tax: money(precise(f.tax)),
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
