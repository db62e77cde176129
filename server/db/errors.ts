/**
 * Recognises database errors from either driver, so services can turn them into clear errors, and
 * keeps the values of the failed statement out of the logs.
 */
import { Knex } from 'knex';

function codeOf(err: unknown): string | undefined {
  const e = err as { code?: string; nativeError?: { code?: string } } | null;
  return e?.code ?? e?.nativeError?.code;
}

export function isUniqueViolation(err: unknown): boolean {
  const code = codeOf(err);
  return code === 'ER_DUP_ENTRY' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** A row still referenced by another (e.g. deleting a client that has invoices). */
export function isReferencedRowViolation(err: unknown): boolean {
  const code = codeOf(err);
  return code === 'ER_ROW_IS_REFERENCED_2' || code === 'ER_ROW_IS_REFERENCED' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/** A row naming a parent that does not exist (e.g. a client deleted between a check and an insert). */
export function isMissingReferenceViolation(err: unknown): boolean {
  const code = codeOf(err);
  return code === 'ER_NO_REFERENCED_ROW_2' || code === 'ER_NO_REFERENCED_ROW' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/**
 * A value the database would not store as given: too long for its column, out of range, or not of
 * the column's type or character set. Input validation should have refused it first.
 */
const DATA_ERROR_CODES = new Set([
  'ER_DATA_TOO_LONG',
  'ER_WARN_DATA_TRUNCATED',
  'ER_WARN_DATA_OUT_OF_RANGE',
  'ER_TRUNCATED_WRONG_VALUE',
  'ER_TRUNCATED_WRONG_VALUE_FOR_FIELD',
  'ER_INVALID_CHARACTER_STRING',
  'SQLITE_TOOBIG',
  'SQLITE_MISMATCH',
  'SQLITE_CONSTRAINT_DATATYPE',
]);

interface DriverErrorFields {
  code?: string;
  errno?: number;
  sqlState?: string;
  /** mysql2: the server's message alone. */
  sqlMessage?: string;
}

/**
 * The driver's own error: objection wraps it in `nativeError`. Recognised by its fields, not by
 * `instanceof Error`: a native driver may build its errors from another realm's Error (as under jest).
 */
function nativeOf(err: unknown): (Error & DriverErrorFields) | undefined {
  const e = err as { nativeError?: unknown } | null;
  const native = (e?.nativeError ?? err) as (Error & DriverErrorFields) | null;
  return typeof native?.message === 'string' && /^(ER_|SQLITE_)/.test(native.code ?? '') ? native : undefined;
}

/**
 * `{ column }` when `err` is a data error, the column named when the driver's message names it
 * (MySQL: "Data too long for column 'name' at row 1", "… for column `db`.`t`.`name` at row 1";
 * SQLite: "cannot store TEXT value in INTEGER column t.name").
 */
export function valueDoesNotFit(err: unknown): { column: string | undefined } | undefined {
  const native = nativeOf(err);
  if (!native || !DATA_ERROR_CODES.has(native.code ?? '')) return undefined;
  const named = /column (?:[`'"]?[\w$]+[`'"]?\.)*[`'"]?([\w$]+)[`'"]?(?: at row \d+)?$/.exec(driverMessage(native));
  return { column: named?.[1] };
}

/** The statement each failed query ran, with `?` placeholders: recorded by `recordFailedStatements`. */
const failedStatements = new WeakMap<Error, string>();

/** Keeps the parameterised statement of every failed query of `knex`, for the logs. */
export function recordFailedStatements(knex: Knex): void {
  knex.on('query-error', (err: Error, query: { sql: string }) => {
    failedStatements.set(err, query.sql);
  });
}

/** The driver's message, without the statement knex puts in front of it. */
function driverMessage(native: Error & DriverErrorFields): string {
  if (native.sqlMessage !== undefined) return native.sqlMessage;
  const sql = failedStatements.get(native);
  return sql !== undefined && native.message.startsWith(`${sql} - `) ? native.message.slice(sql.length + 3) : native.message;
}

/**
 * MySQL quotes the offending value in some messages ("Duplicate entry 'jane@x.com' for key …",
 * "Incorrect string value: '\xF0…' for column …"); it may hold quotes itself, so everything from
 * the opening quote to the part that names the column or key goes.
 */
function withoutValues(message: string): string {
  const beforeName = /((?:entry|value|string):? )'[\s\S]*'( for (?:column|key) )/;
  if (beforeName.test(message)) return message.replace(beforeName, "$1'…'$2");
  return message.replace(/((?:entry|value|string):? )'[\s\S]*'$/, "$1'…'");
}

/**
 * A database error as the logs may keep it: codes, the driver's message without values and the
 * statement with `?` placeholders. Never the bindings, the statement with its values inlined
 * (mysql2's `sql`) or the stack, whose first line repeats the message. Names and e-mails in those
 * values are personal data. `undefined` for any other error.
 */
export function loggableDbError(err: unknown): Record<string, unknown> | undefined {
  const native = nativeOf(err);
  if (!native) return undefined;
  const wrapper = err as Error;
  return {
    type: wrapper.constructor.name,
    code: native.code,
    errno: native.errno,
    sqlState: native.sqlState,
    sqlMessage: withoutValues(driverMessage(native)),
    sql: failedStatements.get(native),
  };
}

/** Connection-level failures: the database cannot be reached (down, restarting, the network cut). */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'PROTOCOL_ENQUEUE_AFTER_FATAL_ERROR',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  'SQLITE_CANTOPEN',
]);

/** The database is unreachable, not the statement wrong: the caller may retry later; nothing was written. */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { name?: string; message?: string; fatal?: boolean } | null;
  if (!e || typeof e !== 'object') return false;
  // The pool could not hand out a connection in time (every attempt to open one failed or hung).
  if (e.name === 'KnexTimeoutError') return true;
  const code = codeOf(err);
  if (code && UNREACHABLE_CODES.has(code)) return true;
  // mysql2, on a connection its server closed under it.
  return typeof e.message === 'string' && /connection is in closed state|Connection lost/i.test(e.message);
}

/**
 * SQLite: another connection holds the lock this statement needs, past the busy timeout
 * (SQLITE_BUSY and its extended codes; SQLITE_LOCKED within one connection's shared cache).
 */
export function isDatabaseBusy(err: unknown): boolean {
  return /^SQLITE_(BUSY|LOCKED)/.test(codeOf(err) ?? '');
}
