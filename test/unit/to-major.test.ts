import Big from 'big.js';
import fc from 'fast-check';
import { toMajor } from '../../server/money/amount';

describe('toMajor', () => {
  test('when any integer of up to 15 digits is shown in a currency of 0, 2 or 3 decimals, then it is the number its exact decimal reads as', () => {
    const currencies = [
      ['JPY', 0],
      ['USD', 2],
      ['KWD', 3],
    ] as const;
    fc.assert(
      fc.property(fc.integer({ min: -999_999_999_999_999, max: 999_999_999_999_999 }), fc.constantFrom(...currencies), (minor, [currency, exponent]) => {
        const exact = Number(new Big(minor).div(new Big(10).pow(exponent)).toString());

        expect(Object.is(toMajor(minor, currency), exact === 0 ? 0 : exact)).toBe(true);
      }),
      { numRuns: 20_000 },
    );
  });

  test('when the amounts are the edges, then they read as written', () => {
    expect(toMajor(1, 'USD')).toBe(0.01);
    expect(toMajor(-1, 'KWD')).toBe(-0.001);
    expect(toMajor(999_999_999_999, 'USD')).toBe(9_999_999_999.99);
    expect(Object.is(toMajor(-0, 'USD'), 0)).toBe(true);
  });
});
