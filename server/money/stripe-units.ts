/**
 * Stripe's units for an amount, which are not always ISO 4217's minor units (docs.stripe.com/currencies):
 * - zero-decimal at Stripe: BIF CLP DJF GNF JPY KMF KRW MGA PYG RWF UGX VND VUV XAF XOF XPF
 *   (MGA has two decimals in ISO 4217: 5000.00 MGA is 500000 here and 5000 at Stripe);
 * - three-decimal: BHD JOD KWD OMR TND, whose amounts must end in 0 (Stripe's card partners);
 * - every other currency is two-decimal at Stripe, ISK included (ISO: none), and ISK charges must
 *   be whole krona (a multiple of 100). HUF and TWD charges may have decimals (only payouts are whole).
 * Both ways are exact: an amount one side cannot express is null, never rounded.
 */
import Big from 'big.js';
import { currencyExponent } from './currencies';

const ZERO_DECIMAL = ['BIF', 'CLP', 'DJF', 'GNF', 'JPY', 'KMF', 'KRW', 'MGA', 'PYG', 'RWF', 'UGX', 'VND', 'VUV', 'XAF', 'XOF', 'XPF'];
const THREE_DECIMAL = ['BHD', 'JOD', 'KWD', 'OMR', 'TND'];
/** Stripe's units an amount must be a multiple of, beyond its decimals. */
const STEP: Record<string, number> = { ISK: 100, BHD: 10, JOD: 10, KWD: 10, OMR: 10, TND: 10 };

function stripeExponent(currency: string): number {
  return ZERO_DECIMAL.includes(currency) ? 0 : THREE_DECIMAL.includes(currency) ? 3 : 2;
}

/** units × 10^shift when that is a whole number, else null. */
function shifted(units: number, shift: number): number | null {
  const value = new Big(units).times(new Big(10).pow(shift));
  return value.eq(value.round(0, Big.roundDown)) ? value.toNumber() : null;
}

/** ISO minor units of `currency` (upper-case) → Stripe's units; null when Stripe cannot charge that amount exactly. */
export function toStripeUnits(minor: number, currency: string): number | null {
  const iso = currencyExponent(currency);
  if (iso === undefined) return null;
  const units = shifted(minor, stripeExponent(currency) - iso);
  return units !== null && units % (STEP[currency] ?? 1) === 0 ? units : null;
}

/** An amount Stripe reports (its units) → ISO minor units of `currency` (upper-case); null when they cannot express it. */
export function fromStripeUnits(units: number, currency: string): number | null {
  const iso = currencyExponent(currency);
  return iso === undefined ? null : shifted(units, iso - stripeExponent(currency));
}
