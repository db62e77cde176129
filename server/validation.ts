/** Joi validation that speaks the contract's error shape: `{ field: [message] }`. */
import Joi from 'joi';
import { utcDate, utcMidnight } from './clock';
import { BadRequest, FieldErrors, ValidationFailed } from './errors';

export function fieldErrors(error: Joi.ValidationError): FieldErrors {
  // A Map, not an object literal: a field may be called "constructor" or "__proto__".
  const byField = new Map<string, string[]>();
  for (const detail of error.details) {
    const field = detail.path.length ? detail.path.join('.') : '_';
    byField.set(field, [...(byField.get(field) ?? []), detail.message]);
  }
  return Object.fromEntries(byField);
}

const baseOptions: Joi.ValidationOptions = {
  abortEarly: false,
  errors: { wrap: { label: false } },
};

/**
 * Validates a request body or service input. Strings are trimmed and cased as the schema says;
 * numeric fields are declared `.strict()` so a JSON "12" is not taken for 12.
 */
export function validateInput<T>(schema: Joi.Schema<T>, input: unknown): T {
  const result: Joi.ValidationResult<T> = schema.validate(input, { convert: true, ...baseOptions });
  if (result.error) throw new ValidationFailed(fieldErrors(result.error));
  return result.value;
}

/** Validates query parameters, which arrive as strings: a malformed one is a 400, not a 422. */
export function validateQuery<T>(schema: Joi.Schema<T>, input: unknown): T {
  const result: Joi.ValidationResult<T> = schema.validate(input, { convert: true, stripUnknown: true, ...baseOptions });
  if (result.error) throw new BadRequest('Malformed query parameters', fieldErrors(result.error));
  return result.value;
}

/** `2026-02-28` is a date, `2026-02-30` is not: the digits must name a day of the Gregorian calendar. */
export function isCalendarDate(value: string): boolean {
  const match = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/.exec(value);
  if (!match) return false;
  const [year, month, day] = match.slice(1).map(Number);
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  return day <= days;
}

/** A real calendar date `YYYY-MM-DD`: refused, never rolled over to the next month. */
export const calendarDate = Joi.string()
  .custom((value: string, helpers) => (isCalendarDate(value) ? value : helpers.error('any.invalid')))
  .messages({ 'any.invalid': '{{#label}} must be a calendar date, YYYY-MM-DD' })
  .meta({ format: 'date' });

/** Optional text up to `max` characters, trimmed; null or empty clears it. */
export const optionalText = (max: number) =>
  Joi.string().trim().max(max).allow(null, '').description('Trimmed; an empty string is stored as null');

/** Empty optional text is stored as null. */
export function blankToNull(value: string | null | undefined): string | null {
  return value ? value : null;
}

/** The calendar date `days` after `date` (both `YYYY-MM-DD`, in UTC). */
export function addDays(date: string, days: number): string {
  const d = utcMidnight(date);
  d.setUTCDate(d.getUTCDate() + days);
  return utcDate(d);
}

