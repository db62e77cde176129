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
