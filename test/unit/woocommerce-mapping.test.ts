/** A WooCommerce order as invoice items, to the cent: exact money strings, coupons once, totals that must match. */
import { orderMarker, OrderRefused, orderToInvoice, parseMoney } from '../../plugin/woocommerce/mapping';
import { WooOrder } from '../../plugin/woocommerce/order';

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

describe('orderToInvoice', () => {
  test('when an order has lines after a coupon, shipping, a negative fee and tax, then the items add up to its total', () => {
    const order = anOrder({
      // 18 + 27 + 10 shipping − 5 fee + 10 tax; the coupon's 5.00 is already out of the line totals.
      total: '60.00',
      line_items: [
        { id: 1, name: 'Mug', quantity: 2, total: '18.00', total_tax: '3.60' },
        { id: 2, name: 'Poster', quantity: 3, total: '27.00', total_tax: '5.40' },
      ],
      shipping_lines: [{ id: 3, method_title: 'Flat rate', total: '10.00', total_tax: '2.00' }],
      fee_lines: [{ id: 4, name: 'Loyalty discount', total: '-5.00', total_tax: '-1.00' }],
      tax_lines: [{ id: 5, rate_code: 'PT-VAT-1', label: 'VAT', tax_total: '8.00', shipping_tax_total: '2.00' }],
      coupon_lines: [{ id: 6, code: 'save10', discount: '5.00' }],
    });

    const invoice = orderToInvoice(order, 'abc123');

    expect(invoice.items).toEqual([
      { description: 'Mug', quantity: 2, unit_price: 9 },
      { description: 'Poster', quantity: 3, unit_price: 9 },
      { description: 'Shipping: Flat rate', quantity: 1, unit_price: 10 },
      { description: 'Loyalty discount', quantity: 1, unit_price: -5 },
      { description: 'Tax: VAT', quantity: 1, unit_price: 10 },
    ]);
    expect(cents(invoice.items)).toBe(6000n);
    expect(invoice.notes).toContain('WooCommerce order #1041');
    expect(invoice.notes).toContain('save10 (−5.00)');
    expect(invoice.notes).toContain(orderMarker('abc123', order));
    expect(invoice).toMatchObject({ currency: 'EUR', issue_date: '2026-11-21', client: { name: 'Ana Silva', email: 'ana@example.com' } });
  });

  test('when a line total does not divide by its quantity, then it becomes one line of the exact total', () => {
    const order = anOrder({ total: '10.00', line_items: [{ id: 1, name: 'Pen', quantity: 3, total: '10.00', total_tax: '0.00' }] });

    const invoice = orderToInvoice(order, 's');

    expect(invoice.items).toEqual([{ description: 'Pen × 3', quantity: 1, unit_price: 10 }]);
  });

  test('when the order is in yen, then amounts have no decimals', () => {
    const order = anOrder({ currency: 'JPY', total: '3300', line_items: [{ id: 1, name: 'Tea', quantity: 2, total: '3000', total_tax: '300' }], tax_lines: [{ id: 2, rate_code: 'JP', label: 'Consumption tax', tax_total: '300', shipping_tax_total: '0' }] });

    const invoice = orderToInvoice(order, 's');

    expect(invoice.items).toEqual([
      { description: 'Tea', quantity: 2, unit_price: 1500 },
      { description: 'Tax: Consumption tax', quantity: 1, unit_price: 300 },
    ]);
  });

  test('when the billing has only a company, then the client is named after it', () => {
    const order = anOrder({ total: '5.00', billing: { company: 'Globex', email: 'ap@globex.example' }, line_items: [{ id: 1, name: 'X', quantity: 1, total: '5.00', total_tax: '0' }] });

    expect(orderToInvoice(order, 's').client).toEqual({ name: 'Globex', email: 'ap@globex.example', company: 'Globex' });
  });

  test.each([
    ['the lines do not add up to the total', { total: '10.01', line_items: [{ id: 1, name: 'X', quantity: 1, total: '10.00', total_tax: '0' }] }, /add up to 10 EUR, not its total 10.01 EUR/],
    ['there is no billing e-mail', { total: '1.00', billing: { first_name: 'A' }, line_items: [{ id: 1, name: 'X', quantity: 1, total: '1.00', total_tax: '0' }] }, /no billing e-mail/],
    ['the currency is unknown', { currency: 'XXY', total: '1.00' }, /unknown currency/],
    ['an amount has too many decimals', { total: '1.001', line_items: [{ id: 1, name: 'X', quantity: 1, total: '1.001', total_tax: '0' }] }, /more decimals/],
  ])('when %s, then the order is refused with the reason', (_case, overrides, reason) => {
    expect(() => orderToInvoice(anOrder(overrides as Partial<WooOrder>), 's')).toThrow(reason);
  });
});
