/**
 * A WooCommerce order as partner-API requests, to the cent: exact money strings, coupons once, totals
 * that must match; the order's identity in metadata, and what the shop took as a payment.
 */
import { OrderRefused, orderToInvoice, orderToPayment, parseMoney, parseRawTax, refundedMinor, refundLines, reverseChargeOf, shopRatesOf } from '../../plugin/woocommerce/mapping';
import { WooOrder } from '../../plugin/woocommerce/order';

const STORE = { url: 'https://shop.example.com', id: 'abc123' };

function anOrder(overrides: Partial<WooOrder> = {}): WooOrder {
  return {
    id: 41,
    number: '1041',
    status: 'completed',
    currency: 'EUR',
    total: '0.00',
    total_tax: '0.00',
    date_created_gmt: '2026-11-20T10:00:00',
    date_completed_gmt: '2026-11-21T09:30:00',
    customer_id: 7,
    billing: { first_name: 'Ana', last_name: 'Silva', email: 'ana@example.com', address_1: 'Rua 1', city: 'Lisboa', postcode: '1000-001', country: 'PT' },
    meta_data: [],
    line_items: [],
    shipping_lines: [],
    fee_lines: [],
    tax_lines: [],
    coupon_lines: [],
    refunds: [],
    ...overrides,
  };
}

const cents = (items: { quantity: number; unit_price: number }[]) =>
  items.reduce((sum, i) => sum + parseMoney(String(i.unit_price), 2, 'x') * BigInt(i.quantity), 0n);

describe('parseMoney', () => {
  test.each([
    ['12.50', 2, 1250n],
    ['0.10', 2, 10n],
    ['-3.05', 2, -305n],
    ['1500', 0, 1500n],
    ['1500.00', 0, 1500n],
    ['12.500000', 2, 1250n],
    ['1.234', 3, 1234n],
  ])('when "%s" is read with %s decimals, then it is %s minor units', (text, exponent, minor) => {
    expect(parseMoney(text, exponent, 'amount')).toBe(minor);
  });

  test.each([['12.505', 2], ['1500.5', 0], ['1,50', 2], ['', 2], ['1e3', 2]])('when "%s" is read with %s decimals, then it is refused', (text, exponent) => {
    expect(() => parseMoney(text, exponent, 'amount')).toThrow(OrderRefused);
  });
});

/** The order's shop rate 1 (20 %) and 2 (0 %) are our rates 77 and 78. */
const RATES = new Map([
  [1, 77],
  [2, 78],
]);
const vatLine = (overrides: Record<string, unknown> = {}) => ({ id: 90, rate_id: 1, rate_code: 'PT-VAT-1', label: 'VAT', rate_percent: 20, compound: false, tax_total: '0', shipping_tax_total: '0', ...overrides });

describe('orderToInvoice', () => {
  test('when an order has lines after a coupon, shipping, a negative fee and tax, then each carries its rate and the shop\'s tax, and they add up to its total', () => {
    const order = anOrder({
      // 18 + 27 + 10 shipping − 5 fee + 3.60 + 5.40 + 2.00 − 1.00 tax; the coupon's 5.00 is already out of the line totals.
      total: '60.00',
      line_items: [
        { id: 1, name: 'Mug', quantity: 2, total: '18.00', total_tax: '3.60', taxes: [{ id: 1, total: '3.6' }] },
        { id: 2, name: 'Poster', quantity: 3, total: '27.00', total_tax: '5.40', taxes: [{ id: 1, total: '5.4' }] },
      ],
      shipping_lines: [{ id: 3, method_title: 'Flat rate', total: '10.00', total_tax: '2.00', taxes: [{ id: 1, total: '2' }] }],
      fee_lines: [{ id: 4, name: 'Loyalty discount', total: '-5.00', total_tax: '-1.00', taxes: [{ id: 1, total: '-1' }] }],
      tax_lines: [vatLine({ tax_total: '8.00', shipping_tax_total: '2.00' })],
      coupon_lines: [{ id: 6, code: 'save10', discount: '5.00' }],
    });

    const invoice = orderToInvoice(order, STORE, RATES);

    const vat = (amount: number) => ({ tax_rate_ids: [77], tax_amounts: [{ tax_rate_id: 77, amount }] });
    expect(invoice.items).toEqual([
      { description: 'Mug', quantity: 2, unit_price: 9, ...vat(3.6) },
      { description: 'Poster', quantity: 3, unit_price: 9, ...vat(5.4) },
      { description: 'Shipping: Flat rate', quantity: 1, unit_price: 10, ...vat(2) },
      { description: 'Loyalty discount', quantity: 1, unit_price: -5, ...vat(-1) },
    ]);
    expect(invoice.rounding_amount).toBeUndefined();
    expect(cents(invoice.items)).toBe(5000n);
    expect(invoice.notes).toContain('WooCommerce order #1041');
    expect(invoice.notes).toContain('save10 (−5.00)');
    expect(invoice).toMatchObject({ currency: 'EUR', issue_date: '2026-11-21', client: { name: 'Ana Silva', email: 'ana@example.com' } });
  });

  test('when the shop rounds tax at subtotal, then each line takes its raw tax rounded and the difference to the total is the rounding amount', () => {
    // Raw 2.3655 → 2.37 and 2.3655 → 2.37 per line; the shop rounds 4.731 once → 4.73: total 24.90 + 4.73.
    const order = anOrder({
      total: '29.63',
      line_items: [
        { id: 1, name: 'Manual', quantity: 1, total: '12.45', total_tax: '2.37', taxes: [{ id: 1, total: '2.3655' }] },
        { id: 2, name: 'Manual (copy)', quantity: 1, total: '12.45', total_tax: '2.37', taxes: [{ id: 1, total: '2.3655' }] },
      ],
      tax_lines: [vatLine({ rate_percent: 19, tax_total: '4.73' })],
    });

    const invoice = orderToInvoice(order, STORE, RATES);

    expect(invoice.items.map((item) => item.tax_amounts)).toEqual([[{ tax_rate_id: 77, amount: 2.37 }], [{ tax_rate_id: 77, amount: 2.37 }]]);
    expect(invoice.rounding_amount).toBe(-0.01);
  });

  test('when a line is zero rated and another untaxed, then the first carries its 0 % rate and the second none', () => {
    const order = anOrder({
      total: '15.00',
      line_items: [
        { id: 1, name: 'Book', quantity: 1, total: '10.00', total_tax: '0.00', taxes: [{ id: 2, total: '0' }] },
        { id: 2, name: 'Gift card', quantity: 1, total: '5.00', total_tax: '0.00', taxes: [] },
      ],
      tax_lines: [vatLine({ id: 91, rate_id: 2, rate_percent: 0, label: 'Zero rate' })],
    });

    const invoice = orderToInvoice(order, STORE, RATES);

    expect(invoice.items.map((item) => [item.tax_rate_ids, item.tax_amounts])).toEqual([
      [[78], [{ tax_rate_id: 78, amount: 0 }]],
      [[], undefined],
    ]);
  });

  test('when an order of a registered customer is mapped, then store and order are in metadata and the notes name only the order number', () => {
    const order = anOrder({ total: '5.00', line_items: [{ id: 1, name: 'X', quantity: 1, total: '5.00', total_tax: '0' }] });

    const invoice = orderToInvoice(order, STORE, RATES);

    expect(invoice.notes).toBe('WooCommerce order #1041');
    expect(invoice.metadata).toEqual({ wc_store: 'https://shop.example.com', wc_order_id: '41' });
    expect(invoice.client.metadata).toEqual({ wc_store: 'https://shop.example.com', wc_customer_id: '7' });
  });

  test('when a line total does not divide by its quantity, then it becomes one line of the exact total', () => {
    const order = anOrder({ total: '10.00', line_items: [{ id: 1, name: 'Pen', quantity: 3, total: '10.00', total_tax: '0.00' }] });

    const invoice = orderToInvoice(order, STORE, RATES);

    expect(invoice.items).toEqual([{ description: 'Pen × 3', quantity: 1, unit_price: 10, tax_rate_ids: [] }]);
  });

  test('when the order is in yen, then amounts and taxes have no decimals', () => {
    const order = anOrder({
      currency: 'JPY',
      total: '3300',
      line_items: [{ id: 1, name: 'Tea', quantity: 2, total: '3000', total_tax: '300', taxes: [{ id: 1, total: '300' }] }],
      tax_lines: [vatLine({ rate_code: 'JP', label: 'Consumption tax', rate_percent: 10, tax_total: '300' })],
    });

    const invoice = orderToInvoice(order, STORE, RATES);

    expect(invoice.items).toEqual([{ description: 'Tea', quantity: 2, unit_price: 1500, tax_rate_ids: [77], tax_amounts: [{ tax_rate_id: 77, amount: 300 }] }]);
  });

  test('when the billing has only a company, then the client is named after it', () => {
    const order = anOrder({ total: '5.00', billing: { company: 'Globex', email: 'ap@globex.example' }, line_items: [{ id: 1, name: 'X', quantity: 1, total: '5.00', total_tax: '0' }] });

    expect(orderToInvoice(order, STORE, RATES).client).toMatchObject({ name: 'Globex', email: 'ap@globex.example', company: 'Globex' });
  });

  test('when the buyer is a guest, then the client has no customer id in its metadata', () => {
    const order = anOrder({ customer_id: 0, total: '5.00', line_items: [{ id: 1, name: 'X', quantity: 1, total: '5.00', total_tax: '0' }] });

    expect(orderToInvoice(order, STORE, RATES).client.metadata).toEqual({ wc_store: 'https://shop.example.com' });
  });

  test.each([
    ['the lines are further from the total than rounding', { total: '10.05', line_items: [{ id: 1, name: 'X', quantity: 1, total: '10.00', total_tax: '0' }] }, /add up to 10 EUR, not its total 10.05 EUR/],
    ['there is no billing e-mail', { total: '1.00', billing: { first_name: 'A' }, line_items: [{ id: 1, name: 'X', quantity: 1, total: '1.00', total_tax: '0' }] }, /no billing e-mail/],
    ['the currency is unknown', { currency: 'XXY', total: '1.00' }, /unknown currency/],
    ['an amount has too many decimals', { total: '1.001', line_items: [{ id: 1, name: 'X', quantity: 1, total: '1.001', total_tax: '0' }] }, /more decimals/],
    ['a line is taxed at a rate no tax line names', { total: '1.20', line_items: [{ id: 1, name: 'X', quantity: 1, total: '1.00', total_tax: '0.20', taxes: [{ id: 9, total: '0.2' }] }] }, /shop rate 9, which no tax line/],
  ])('when %s, then the order is refused with the reason', (_case, overrides, reason) => {
    expect(() => orderToInvoice(anOrder(overrides as Partial<WooOrder>), STORE, RATES)).toThrow(reason);
  });
});

describe('refundLines', () => {
  const invoice = (overrides: Record<string, unknown> = {}) => ({
    currency: 'EUR',
    total: 353.97,
    amount_credited: 0,
    items: [{ id: 11 }, { id: 12 }],
    tax_breakdown: [{ tax_rate_id: 77, percentage: 19, inclusive: false }],
    ...overrides,
  });

  test('when the whole of an uncredited invoice is refunded, then each of its lines is credited', () => {
    expect(refundLines(invoice(), 35397n, 'Refund')).toEqual([{ invoice_item_id: 11 }, { invoice_item_id: 12 }]);
  });

  test('when part is refunded on an invoice of one rate, then one line without tax makes the refund with its tax', () => {
    // 53.97 = 45.35 + round(45.35 × 19 %) = 45.35 + 8.62.
    expect(refundLines(invoice(), 5397n, 'Refund')).toEqual([{ description: 'Refund', quantity: 1, unit_price: 45.35, tax_rate_ids: [77] }]);
    // The whole of an invoice credited before is refunded so too: 297.45 + 56.52.
    expect(refundLines(invoice({ amount_credited: 10 }), 35397n, 'Refund')).toEqual([{ description: 'Refund', quantity: 1, unit_price: 297.45, tax_rate_ids: [77] }]);
  });

  test.each([
    ['an invoice of two rates', invoice({ tax_breakdown: [{ tax_rate_id: 77, percentage: 19, inclusive: false }, { tax_rate_id: 78, percentage: 7, inclusive: false }] }), 5397n],
    ['an invoice without tax', invoice({ tax_breakdown: [] }), 5397n],
  ])('when it is %s, then the refund is one line without tax', (_case, of, minor) => {
    expect(refundLines(of, minor, 'Refund')).toEqual([{ description: 'Refund', quantity: 1, unit_price: Number(minor) / 100, tax_rate_ids: [] }]);
  });
});

describe('reverseChargeOf', () => {
  const withVat = (value: unknown, total_tax: string) => anOrder({ total_tax, meta_data: [{ id: 1, key: '_billing_vat_number', value }] });

  test.each([
    ['a VAT number and no tax', withVat('fr 40 303.265-045', '0.00'), 'FR40303265045'],
    ['a VAT number and tax charged', withVat('FR40303265045', '19.00'), null],
    ['an empty VAT number', withVat('  ', '0.00'), null],
    ['no VAT number', anOrder({ total_tax: '0.00' }), null],
  ])('when an order has %s, then its reverse-charge VAT number is %s', (_case, order, expected) => {
    expect(reverseChargeOf(order, '_billing_vat_number')).toBe(expected);
  });

  test('when the shop keeps the VAT number under another key, then that key is read', () => {
    const order = anOrder({ total_tax: '0', meta_data: [{ id: 1, key: 'vat_id', value: 'DE123456789' }] });

    expect(reverseChargeOf(order, 'vat_id')).toBe('DE123456789');
    expect(reverseChargeOf(order, '_billing_vat_number')).toBeNull();
  });
});

describe('shopRatesOf and parseRawTax', () => {
  test('when an order names its rates, then each is keyed by shop rate and percentage, and a compound rate is refused', () => {
    expect(shopRatesOf(anOrder({ tax_lines: [vatLine({ rate_percent: 8.875, label: 'NY' })] }))).toEqual([{ id: 1, key: '1:8.875', label: 'NY', percentage: 8.875 }]);
    expect(() => shopRatesOf(anOrder({ tax_lines: [vatLine({ compound: true })] }))).toThrow(/compound/);
    expect(() => shopRatesOf(anOrder({ tax_lines: [vatLine({ rate_percent: undefined })] }))).toThrow(/rate_percent/);
  });

  test.each([
    ['2.3655', 2, 237n],
    ['2.3649', 2, 236n],
    ['-1.005', 2, -101n],
    ['46.76', 2, 4676n],
    ['0', 2, 0n],
    ['', 2, 0n],
    ['79.5', 0, 80n],
  ])('when the raw tax "%s" is rounded to %s decimals, then it is %s minor units', (text, exponent, minor) => {
    expect(parseRawTax(text, exponent, 'tax')).toBe(minor);
  });
});

describe('orderToPayment', () => {
  const now = new Date('2026-11-22T12:00:00Z');

  test.each([
    ['bacs', 'bank_transfer'],
    ['cod', 'cash'],
    ['cheque', 'check'],
    ['stripe', 'card'],
    ['woocommerce_payments', 'card'],
    ['stripe_sepa', 'other'],
    ['paypal', 'other'],
  ])('when the order was paid with %s, then the payment method is %s', (gateway, method) => {
    const order = anOrder({ payment_method: gateway, date_paid_gmt: '2026-11-21T09:00:00' });

    expect(orderToPayment(order, STORE, now)?.method).toBe(method);
  });

  test('when a gateway paid the order, then its transaction id is the reference and its title is in the metadata', () => {
    const order = anOrder({ payment_method: 'stripe', payment_method_title: 'Credit card', transaction_id: 'ch_123', date_paid_gmt: '2026-11-21T09:00:00' });

    expect(orderToPayment(order, STORE, now)).toEqual({
      method: 'card',
      reference: 'ch_123',
      paid_at: '2026-11-21T09:00:00.000Z',
      metadata: { wc_store: 'https://shop.example.com', wc_order_id: '41', wc_payment_method: 'stripe', wc_payment_method_title: 'Credit card' },
    });
  });

  test('when there is no transaction id, then the order number is the reference', () => {
    const order = anOrder({ payment_method: 'cod', transaction_id: '', date_paid_gmt: '2026-11-21T09:00:00' });

    expect(orderToPayment(order, STORE, now)?.reference).toBe('1041');
  });

  test('when the store clock is ahead, then the payment date is not in the future', () => {
    const order = anOrder({ date_paid_gmt: '2026-11-22T12:00:30' });

    expect(orderToPayment(order, STORE, now)?.paid_at).toBe(now.toISOString());
  });

  test('when the order is not paid, then there is no payment', () => {
    expect(orderToPayment(anOrder({ date_paid_gmt: null }), STORE, now)).toBeNull();
  });
});

describe('refundedMinor', () => {
  test('when an order has refunds, then their negative totals add up in minor units', () => {
    const order = anOrder({ refunds: [{ id: 9, total: '-5.00' }, { id: 8, total: '-0.10' }] });

    expect(refundedMinor(order)).toBe(510n);
  });
});
