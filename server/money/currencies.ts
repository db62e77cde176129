/** ISO 4217 currencies with their minor-unit exponents, from the maintained currency-codes data. */
import { code as lookupCurrency } from 'currency-codes';

/** Exponents looked up so far: the library scans its whole list per lookup, and every amount shown asks. */
const exponents = new Map<string, number | undefined>();

/** The number of decimals of the currency (USD 2, JPY 0, KWD 3), or undefined for an unknown code. */
export function currencyExponent(currency: string): number | undefined {
  if (!exponents.has(currency)) {
    // Only well-formed codes are kept, so a stream of made-up ones cannot grow the map without bound.
    const exponent = lookupCurrency(currency)?.digits;
    if (/^[A-Z]{3}$/.test(currency)) exponents.set(currency, exponent);
    return exponent;
  }
  return exponents.get(currency);
}

export function isCurrency(value: string): boolean {
  return /^[A-Z]{3}$/.test(value) && currencyExponent(value) !== undefined;
}
