/** ISO 4217 currencies with their minor-unit exponents, from the maintained currency-codes data. */
import { code as lookupCurrency } from 'currency-codes';

/** The number of decimals of the currency (USD 2, JPY 0, KWD 3), or undefined for an unknown code. */
export function currencyExponent(currency: string): number | undefined {
  const record = lookupCurrency(currency);
  return record ? record.digits : undefined;
}

export function isCurrency(value: string): boolean {
  return /^[A-Z]{3}$/.test(value) && currencyExponent(value) !== undefined;
}
