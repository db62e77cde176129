/** The parts of a WooCommerce REST v3 order the bridge reads. Money is a decimal string ("12.50", JPY "1500"). */
export interface WooMeta {
  id?: number;
  key: string;
  value: unknown;
}

export interface WooAddress {
  first_name?: string;
  last_name?: string;
  company?: string;
  address_1?: string;
  address_2?: string;
  city?: string;
  state?: string;
  postcode?: string;
  country?: string;
  email?: string;
  phone?: string;
}

/**
 * A line, shipping line or fee: `total` without tax, `total_tax` rounded to the currency, and
 * `taxes` the tax per shop rate as WooCommerce stored it (raw, e.g. "2.3655", when the shop
 * rounds at subtotal).
 */
export interface WooTaxedItem {
  id: number;
  total: string;
  total_tax: string;
  taxes?: { id: number; total: string }[];
}

export interface WooOrder {
  id: number;
  number: string;
  status: string;
  currency: string;
  total: string;
  total_tax: string;
  date_created_gmt?: string | null;
  date_completed_gmt?: string | null;
  date_modified_gmt?: string | null;
  /** Set by WooCommerce when the order is paid (a gateway's payment, or a paid status reached); null until then. */
  date_paid_gmt?: string | null;
  customer_id: number;
  billing: WooAddress;
  payment_method?: string;
  payment_method_title?: string;
  transaction_id?: string;
  meta_data: WooMeta[];
  /** Whether the shop enters prices with tax; line `total`s are without tax either way. */
  prices_include_tax?: boolean;
  line_items: (WooTaxedItem & { name: string; quantity: number })[];
  shipping_lines: (WooTaxedItem & { method_title: string })[];
  fee_lines: (WooTaxedItem & { name: string })[];
  /** One per shop tax rate the order uses: `rate_id` names it in the items' `taxes`. */
  tax_lines: { id: number; rate_id: number; rate_code: string; label: string; rate_percent?: number; compound?: boolean; tax_total: string; shipping_tax_total: string }[];
  coupon_lines: { id: number; code: string; discount: string }[];
  /** Negative totals ("-5.00"), newest first. */
  refunds: { id: number; reason?: string; total: string }[];
}

/** Statuses after which an unpaid invoice is voided (WooCommerce sets `refunded` once refunds reach the total). */
export const CLOSED_STATUSES = ['cancelled', 'refunded'];

/** The statuses the bridge acts on; the others (pending, processing, on-hold…) are orders still under way. */
export const WATCHED_STATUSES = ['completed', ...CLOSED_STATUSES];

/**
 * The order meta the bridge writes: each records one thing done on the partner API for the order,
 * written after it, so a later delivery or poll does only what is missing. Keys start with `_`, which
 * WordPress hides from the custom-fields box: they are the bridge's, not the shop owner's.
 */
export const MARKS = {
  /** The order's invoice: the mark of an invoiced order (the earlier bridge wrote it too). */
  invoice: '_invoicing_invoice_id',
  /** The payment recorded on that invoice for what the shop took. */
  payment: '_invoicing_payment_id',
  /** How much of the shop's refunds (minor units) has been refunded on that payment. */
  refunded: '_invoicing_refunded_minor',
  /** "yes" once the invoice is void because the order was cancelled or refunded. */
  voided: '_invoicing_voided',
  /** When an invoice was first asked for: a later run looks it up before making one. */
  attempt: '_invoicing_attempt',
  /** Why the order was last refused, as told in its note: a refusal is noted once, not on every poll. */
  refused: '_invoicing_refused',
} as const;

export interface OrderMarks {
  invoiceId: number | null;
  paymentId: number | null;
  refundedMinor: bigint;
  voided: boolean;
  attempted: boolean;
  refused: string | null;
}

/** The bridge writes its marks as text; anything else under its keys (an array, an object) is no mark. */
function metaValue(order: WooOrder, key: string): string | null {
  const value = order.meta_data.find((m) => m.key === key)?.value;
  if (typeof value === 'number') return String(value);
  return typeof value === 'string' && value !== '' ? value : null;
}

function recordId(value: string | null): number | null {
  const id = value === null ? NaN : Number(value);
  return Number.isSafeInteger(id) && id > 0 ? id : null;
}

export function invoiceIdOf(order: WooOrder): number | null {
  return recordId(metaValue(order, MARKS.invoice));
}

export function marksOf(order: WooOrder): OrderMarks {
  const refunded = metaValue(order, MARKS.refunded);
  return {
    invoiceId: invoiceIdOf(order),
    paymentId: recordId(metaValue(order, MARKS.payment)),
    refundedMinor: refunded !== null && /^\d+$/.test(refunded) ? BigInt(refunded) : 0n,
    voided: metaValue(order, MARKS.voided) === 'yes',
    attempted: metaValue(order, MARKS.attempt) !== null,
    refused: metaValue(order, MARKS.refused),
  };
}

/** WooCommerce prints `*_gmt` dates without a zone: they are UTC. NaN when absent. */
export function gmtTime(value: string | null | undefined): number {
  return value ? Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value}Z`) : NaN;
}
