/** Joi validation that speaks the contract's error shape: `{ field: [message] }`. */
import Joi from 'joi';
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
  const { value, error } = schema.validate(input, { convert: true, ...baseOptions });
  if (error) throw new ValidationFailed(fieldErrors(error));
  return value as T;
}

/** Validates query parameters, which arrive as strings: a malformed one is a 400, not a 422. */
export function validateQuery<T>(schema: Joi.Schema<T>, input: unknown): T {
  const { value, error } = schema.validate(input, { convert: true, stripUnknown: true, ...baseOptions });
  if (error) throw new BadRequest('Malformed query parameters', fieldErrors(error));
  return value as T;
}

/** A real calendar date `YYYY-MM-DD` (2026-02-30 is refused, not rolled over to March). */
export const calendarDate = Joi.string()
  .custom((value: string, helpers) => (isCalendarDate(value) ? value : helpers.error('any.invalid')))
  .messages({ 'any.invalid': 'must be a calendar date YYYY-MM-DD' });

export function isCalendarDate(value: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return false;
  const [year, month, day] = match.slice(1).map(Number);
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** The calendar date `days` after `date` (both `YYYY-MM-DD`, in UTC). */
export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

export function todayUtc(): string {
  return new Date().toISOString().slice(0, 10);
}
