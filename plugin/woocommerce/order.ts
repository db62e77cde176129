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
  customer_id: number;
  billing: WooAddress;
  meta_data: WooMeta[];
  line_items: { id: number; name: string; quantity: number; total: string; total_tax: string }[];
  shipping_lines: { id: number; method_title: string; total: string; total_tax: string }[];
  fee_lines: { id: number; name: string; total: string; total_tax: string }[];
  tax_lines: { id: number; rate_code: string; label: string; tax_total: string; shipping_tax_total: string }[];
  coupon_lines: { id: number; code: string; discount: string }[];
  refunds: { id: number; total: string }[];
}

/** The order meta key that records the invoice made for the order: the bridge's exactly-once mark. */
export const INVOICE_META_KEY = '_invoicing_invoice_id';

export function invoiceIdOf(order: WooOrder): number | null {
  const meta = order.meta_data.find((m) => m.key === INVOICE_META_KEY);
  const id = meta === undefined ? NaN : Number(meta.value);
  return Number.isSafeInteger(id) && id > 0 ? id : null;
}
