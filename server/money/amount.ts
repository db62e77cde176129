/**
 * Amounts cross the API as JSON numbers in major units and live everywhere else as integers in
 * minor units. Decimal arithmetic goes through big.js, so no float ever decides a cent.
 */
import Big from 'big.js';
import Joi from 'joi';
import { currencyExponent, isCurrency } from './currencies';

/** The largest amount, in minor units, of one price, line, invoice, payment or expense. */
export const MAX_MINOR_AMOUNT = 999_999_999_999;

/** Quantities keep at most four decimals: stored as integer ten-thousandths. */
export const QUANTITY_SCALE = 10_000;
export const MAX_QUANTITY = 1_000_000;

export class AmountProblem extends Error {}

function exponentOf(currency: string): number {
  const exponent = currencyExponent(currency);
  if (exponent === undefined) throw new AmountProblem(`${currency} is not a known currency`);
  return exponent;
}

/**
 * 12.34 USD → 1234; 12.345 USD → refused; 1200 JPY → 1200; 1.5 JPY → refused. The number's
 * shortest decimal form (what JSON carried) is what counts, so 0.1 + 0.2 style drift cannot creep in.
 */
export function toMinor(amount: number, currency: string): number {
  if (!Number.isFinite(amount)) throw new AmountProblem('must be a finite number');
  const exponent = exponentOf(currency);
  const minor = new Big(amount).times(new Big(10).pow(exponent));
  if (!minor.eq(minor.round(0, Big.roundDown))) {
    throw new AmountProblem(exponent === 0 ? `${currency} amounts have no decimals` : `${currency} amounts have at most ${exponent} decimals`);
  }
  if (minor.abs().gt(MAX_MINOR_AMOUNT)) throw new AmountProblem('is too large');
  return minor.toNumber();
}

/**
 * 1234 USD → 12.34; shown as a JSON number in major units. A plain division is exact here: an
 * integer of at most 15 digits (every amount, and every sum of them, is far below) over a power of
 * ten is rounded to the double nearest the decimal quotient, which is the double that decimal's
 * text reads as: what big.js gives, at a fraction of its cost, and every amount of every response
 * passes here. `+ 0` shows a negative zero as 0.
 */
export function toMajor(minor: number, currency: string): number {
  return minor / 10 ** exponentOf(currency) + 0;
}

/** An amount as people read it in a message, with its currency's decimals: 15000 USD → `150.00 USD`. */
export function displayAmount(minor: number, currency: string): string {
  return `${toMajor(minor, currency).toFixed(exponentOf(currency))} ${currency}`;
}

/** A quantity with at most four decimals, as integer ten-thousandths. */
export function toQuantityUnits(quantity: number): number {
  const units = new Big(quantity).times(QUANTITY_SCALE);
  if (!units.eq(units.round(0, Big.roundDown))) throw new AmountProblem('has at most 4 decimals');
  return units.toNumber();
}

export function fromQuantityUnits(units: number): number {
  return new Big(units).div(QUANTITY_SCALE).toNumber();
}

/** quantity × unit price, rounded half away from zero to the minor unit. */
export function lineAmount(quantityUnits: number, unitPriceMinor: number): number {
  const amount = new Big(quantityUnits).times(unitPriceMinor).div(QUANTITY_SCALE).round(0, Big.roundHalfUp);
  if (amount.abs().gt(MAX_MINOR_AMOUNT)) throw new AmountProblem('quantity × unit_price is too large');
  return amount.toNumber();
}

/**
 * The one currency input of the API, the CLI and the documents: three letters in any case (the
 * pattern is what the OpenAPI document shows), upper-cased, and checked against the ISO 4217 list.
 */
export const currencyField = Joi.string()
  .pattern(/^[A-Za-z]{3}$/)
  .uppercase()
  // A value the pattern refused has its error already: one message per field.
  .custom((value: string, helpers) => (!/^[A-Z]{3}$/.test(value) || isCurrency(value) ? value : helpers.error('any.invalid')))
  .messages({ 'string.pattern.base': '{{#label}} must be an ISO 4217 code such as USD', 'any.invalid': '{{#label}} must be an ISO 4217 code such as USD' })
  .description('ISO 4217 code, any case (usd = USD); stored and returned upper-case');

/** A JSON number (never a numeric string) of major units; decimals are checked against the currency later. */
export const moneyField = Joi.number().strict();

/**
 * Converts `amount`, recording a field error instead of throwing, so one 422 names every bad
 * amount of a request. Returns 0 for a refused amount; the caller throws before using it.
 */
export function collectMinor(errors: Map<string, string[]>, field: string, amount: number, currency: string): number {
  try {
    return toMinor(amount, currency);
  } catch (err) {
    if (!(err instanceof AmountProblem)) throw err;
    errors.set(field, [...(errors.get(field) ?? []), err.message]);
    return 0;
  }
}
