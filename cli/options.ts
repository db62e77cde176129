/** Parsers for option values shared by the commands; a bad value is a usage error (exit 2). */
import type Joi from 'joi';
import { ALL_SCOPES, isScope, Scope } from '../server/auth/scopes';
import { invalidOptions, UsageError } from './errors';
import type { AnswerCheck } from './prompt';

const ID = /^[1-9][0-9]{0,15}$/;

export function positiveId(value: string, what: string): number {
  if (!ID.test(value.trim())) throw new UsageError(`${what} must be a positive integer, not "${value}"`);
  return Number(value.trim());
}

/** A decimal amount in major units, e.g. `12.50`; the currency's exponent is checked by the service. */
export function parseAmount(value: string): number {
  if (!/^\d{1,13}(\.\d{1,6})?$/.test(value.trim())) throw new UsageError(`--amount must be a positive decimal amount with a dot, e.g. 12.50, not "${value}"`);
  const amount = Number(value.trim());
  if (!(amount > 0)) throw new UsageError('--amount must be greater than zero');
  return amount;
}

/** A record id typed at a prompt. */
export const idAnswer: AnswerCheck = (answer) => ID.test(answer) || 'a positive whole number, e.g. 12';

/**
 * A prompt's check by one field of a request schema, with the schema's own message (`must be an
 * ISO 4217 code such as USD`), so a wrong answer is refused as it is given, not after the last one.
 */
export function fieldCheck(schema: Joi.ObjectSchema, field: string): AnswerCheck {
  const rule = schema.extract(field);
  return (answer) => {
    const { error } = rule.validate(answer, { errors: { wrap: { label: false }, label: false } });
    return error ? error.details.map((detail) => detail.message).join('; ') : true;
  };
}

/** `all`, or a comma list of scope names. */
export function parseScopes(value: string, flag = '--scopes'): Scope[] {
  if (value.trim() === 'all') return [...ALL_SCOPES];
  const scopes = value.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length || scopes.length === 0) {
    throw new UsageError(`${flag}: unknown scope(s) ${unknown.join(', ') || '(none given)'}; use "all" or a comma list of: ${ALL_SCOPES.join(', ')}`);
  }
  return [...new Set(scopes)] as Scope[];
}

export function parseMode(value: string): 'test' | 'live' {
  if (value !== 'test' && value !== 'live') throw new UsageError('--mode must be test or live');
  return value;
}

/** An ISO 8601 date or date-time (`2026-11-22`, `2026-11-22T09:00:00Z`); a time without a zone is UTC. */
export function parseSince(value: string, flag = '--since'): Date {
  const match = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|[+-]\d{2}:?\d{2})?)?$/.exec(value.trim());
  const date = match ? new Date(`${match[1]}T${match[2] ?? '00:00:00'}${match[3] ?? 'Z'}`) : null;
  if (!date || Number.isNaN(date.getTime())) throw new UsageError(`${flag} must be an ISO 8601 date or time, e.g. 2026-11-22 or 2026-11-22T09:00:00Z`);
  return date;
}

/**
 * The body `schema` (a request schema of the API's) accepts, or a usage error naming each refused
 * field by the flag it came from (`flagOf`). The server's validation is required when this runs, so
 * that a command's `--help` loads none of it.
 */
export function validBody<T>(schema: Joi.ObjectSchema<T>, input: object, flagOf: (field: string) => string): T {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- required when the command runs (see above)
  const { validateInput } = require('../server/validation') as typeof import('../server/validation');
  return refusedAsUsage(() => validateInput(schema, input), input, flagOf);
}

/**
 * What `work` returns (or resolves to), with the fields a service refuses (ValidationFailed: a value
 * it judged, such as an address in a private network) as a usage error naming each by its flag.
 */
export function refusedAsUsage<R>(work: () => R, input: object, flagOf: (field: string) => string): R {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- required when the command runs (see validBody)
  const { ValidationFailed } = require('../server/errors') as typeof import('../server/errors');
  const asUsage = (err: unknown): never => {
    if (!(err instanceof ValidationFailed)) throw err;
    throw new UsageError(invalidOptions(err.details ?? {}, flagOf, (field) => (input as Record<string, unknown>)[field]));
  };
  try {
    const result = work();
    return (result instanceof Promise ? result.catch(asUsage) : result) as R;
  } catch (err) {
    return asUsage(err);
  }
}
