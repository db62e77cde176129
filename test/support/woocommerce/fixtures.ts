/**
 * Orders a bridge meets in real stores, as inputs for `store.addOrder()`. Their totals are worked
 * out in the comments so a test can state them as plain numbers.
 */
import { OrderInput } from './orders';

/**
 * A registered customer in France, EUR, 20 % VAT everywhere, coupon WELCOME10 (10 %), shipping and a
 * negative fee. Lines 259.80 + 34.50, discounted by 25.98 + 3.45 to 233.82 + 31.05 (tax 46.76, the
 * 46.764 rounded per line, + 6.21); shipping 9.90 + 1.98; fee −5.00 − 1.00.
 * discount_total 29.43, discount_tax 5.89, cart_tax 51.97, shipping_tax 1.98, total_tax 53.95, total 323.72.
 */
export function registeredEurOrder(overrides: Partial<OrderInput> = {}): OrderInput {
  return {
    status: 'processing',
    currency: 'EUR',
    customer_id: 42,
    billing: {
      first_name: 'Claire',
      last_name: 'Martin',
      address_1: '12 rue des Lilas',
      city: 'Paris',
      postcode: '75011',
      country: 'FR',
      email: 'claire.martin@example.fr',
      phone: '+33 1 23 45 67 89',
    },
    shippingAddress: { first_name: 'Claire', last_name: 'Martin', address_1: '12 rue des Lilas', city: 'Paris', postcode: '75011', country: 'FR' },
    lines: [
      { name: 'Ergonomic chair', quantity: 2, price: '129.90', taxRate: 20, sku: 'CHAIR-ERGO', product_id: 501 },
      { name: 'Desk lamp', quantity: 1, price: '34.50', taxRate: 20, sku: 'LAMP-01', product_id: 502 },
    ],
    shipping: { title: 'Colissimo', total: '9.90', taxRate: 20 },
    fees: [{ name: 'Loyalty discount', total: '-5.00', taxRate: 20 }],
    coupon: { code: 'welcome10', percent: 10 },
    payment_method: 'stripe',
    payment_method_title: 'Credit card',
    transaction_id: 'ch_3PfQ2x2eZvKYlo2C',
    ...overrides,
  };
}

/**
 * A guest (customer_id 0) in Japan, JPY (no decimals), two consumption-tax rates: matcha 3 × 1200 at
 * 8 % (tax 288), a tea cup 2500 at 10 % (tax 250), shipping 800 at 10 % (tax 80).
 * cart_tax 538, shipping_tax 80, total_tax 618, total 7518.
 */
export function guestJpyOrder(overrides: Partial<OrderInput> = {}): OrderInput {
  return {
    status: 'processing',
    currency: 'JPY',
    customer_id: 0,
    billing: {
      first_name: '花子',
      last_name: '山田',
      address_1: '1-2-3 Shibuya',
      city: 'Shibuya-ku',
      state: 'JP13',
      postcode: '150-0002',
      country: 'JP',
      email: 'hanako.yamada@example.jp',
    },
    lines: [
      { name: 'Matcha 100 g', quantity: 3, price: '1200', taxRate: 8, sku: 'MATCHA-100' },
      { name: 'Tea cup', quantity: 1, price: '2500', taxRate: 10, sku: 'CUP-01' },
    ],
    shipping: { title: 'Yamato', total: '800', taxRate: 10 },
    payment_method: 'cod',
    payment_method_title: 'Cash on delivery',
    ...overrides,
  };
}

/**
 * A business buyer known only by its company name (no first or last name), in Germany, EUR, 19 %:
 * 3 × 95.00 (tax 54.15) and one 12.45 (tax 2.3655 rounded half up to 2.37), no shipping.
 * cart_tax 56.52, total_tax 56.52, total 353.97.
 */
export function companyOnlyOrder(overrides: Partial<OrderInput> = {}): OrderInput {
  return {
    status: 'processing',
    currency: 'EUR',
    customer_id: 7,
    billing: {
      company: 'Acme Consulting GmbH',
      address_1: 'Friedrichstraße 10',
      city: 'Berlin',
      postcode: '10117',
      country: 'DE',
      email: 'accounts@acme-consulting.example',
    },
    lines: [
      { name: 'Consulting hour', quantity: 3, price: '95.00', taxRate: 19 },
      { name: 'Printed manual', quantity: 1, price: '12.45', taxRate: 19 },
    ],
    payment_method: 'bacs',
    payment_method_title: 'Direct bank transfer',
    ...overrides,
  };
}
