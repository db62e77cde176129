/** ISO 4217 minor units ↔ Stripe's units, exact both ways. */
import { fromStripeUnits, toStripeUnits } from '../../server/money/stripe-units';

describe('toStripeUnits', () => {
  test.each([
    ['USD', 1234, 1234],
    ['JPY', 500, 500],
    ['UGX', 5000, 5000],
    ['ISK', 15000, 1500000],
    ['MGA', 500000, 5000],
    ['KWD', 12340, 12340],
    ['HUF', 1050, 1050],
    ['TWD', 1001, 1001],
  ])('when %s %i minor units go to Stripe, then they are %i of its units', (currency, minor, units) => {
    expect(toStripeUnits(minor, currency)).toBe(units);
  });

  test.each([
    ['KWD 12.345 (a three-decimal amount not ending in 0)', 'KWD', 12345],
    ['BHD 0.001', 'BHD', 1],
    ['MGA 5000.50 (ariary with decimals, zero-decimal at Stripe)', 'MGA', 500050],
    ['CLF 1.2345 (four decimals)', 'CLF', 12345],
    ['an unknown currency', 'XXY', 100],
  ])('when the amount is %s, then Stripe cannot take it exactly (null)', (_case, currency, minor) => {
    expect(toStripeUnits(minor, currency)).toBeNull();
  });
});

describe('fromStripeUnits', () => {
  test.each([
    ['USD', 1234, 1234],
    ['ISK', 1500000, 15000],
    ['MGA', 5000, 500000],
    ['KWD', 12340, 12340],
  ])('when Stripe reports %s %i of its units, then they are %i minor units', (currency, units, minor) => {
    expect(fromStripeUnits(units, currency)).toBe(minor);
  });

  test('when Stripe reports ISK øre (1500050), then it is not a whole ISO amount (null), never rounded', () => {
    expect(fromStripeUnits(1500050, 'ISK')).toBeNull();
  });

  test('when an amount goes to Stripe and comes back, then it is the same amount', () => {
    for (const [currency, minor] of [['ISK', 987], ['MGA', 123400], ['KWD', 990], ['EUR', 1], ['JPY', 1]] as const) {
      expect(fromStripeUnits(toStripeUnits(minor, currency)!, currency)).toBe(minor);
    }
  });
});
