/**
 * Typed errors with stable codes, shared by the HTTP layer, the CLI and the scheduled jobs. Each
 * class declares its code (`static readonly code`): the OpenAPI document's Error schema lists the
 * codes of the classes, so a code is written once.
 */
export type FieldErrors = Record<string, string[]>;

export class AppError extends Error {
  /** Sent as Retry-After when set: when the request may succeed if made again. */
  readonly retryAfterSeconds?: number;

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: FieldErrors,
    readonly extra?: Record<string, unknown>,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class BadRequest extends AppError {
  static readonly code = 'bad_request';

  constructor(message: string, details?: FieldErrors) {
    super(400, BadRequest.code, message, details);
  }
}

export class Unauthorized extends AppError {
  static readonly code = 'unauthorized';

  constructor(message = 'A valid API key is required: send it as "Authorization: Bearer <key>"') {
    super(401, Unauthorized.code, message);
  }
}

export class Forbidden extends AppError {
  static readonly code = 'forbidden';

  constructor(requiredScope: string, keyScopes: readonly string[]) {
    super(403, Forbidden.code, `This key lacks the scope ${requiredScope}`, undefined, {
      required_scope: requiredScope,
      key_scopes: [...keyScopes],
    });
  }
}

export class NotFound extends AppError {
  static readonly code = 'not_found';

  /**
   * `id`, when given, is named (`Invoice 42 not found`): the id the caller asked for, or one their
   * own record refers to, so it tells them nothing about anyone else's records.
   */
  constructor(what: string, id?: number) {
    super(404, NotFound.code, id === undefined ? `${what} not found` : `${what} ${id} not found`);
  }
}

/** The body is larger than the parser takes: a JSON body's 1 MB (server/http/errors.ts), or a document route's own limit. */
export class PayloadTooLarge extends AppError {
  static readonly code = 'payload_too_large';

  constructor(limit = '1 MB') {
    super(413, PayloadTooLarge.code, `The request body is larger than ${limit}`);
  }
}

export class ValidationFailed extends AppError {
  static readonly code = 'validation_failed';

  constructor(details: FieldErrors, message = 'The request has invalid fields') {
    super(422, ValidationFailed.code, message, details);
  }
}

/** A business rule refuses the request in the record's current state (e.g. editing a sent invoice). */
export class InvalidState extends AppError {
  static readonly code = 'invalid_state';

  constructor(message: string) {
    super(422, InvalidState.code, message);
  }
}

export class RateLimited extends AppError {
  static readonly code = 'rate_limited';

  constructor(message = 'Too many requests: wait as given by Retry-After') {
    super(429, RateLimited.code, message);
  }
}

/** A payment gateway refused a request or could not be reached: nothing was changed here. */
export class GatewayError extends AppError {
  static readonly code = 'gateway_error';

  constructor(message: string) {
    super(502, GatewayError.code, message);
  }
}

/** Too many PDFs wait for a thread: this one was not started (see pdf/pool.ts). */
export class PdfBusy extends AppError {
  static readonly code = 'service_unavailable';
  override readonly retryAfterSeconds = 5;

  constructor() {
    super(503, PdfBusy.code, 'Too many PDFs are being made right now: retry after the seconds given by Retry-After');
  }
}

/**
 * SQLite: another process held the write lock past DATABASE_BUSY_TIMEOUT_MS. Nothing was written (the
 * transaction could not begin, or rolled back), so a retry is safe.
 */
export class DatabaseBusy extends AppError {
  static readonly code = 'service_unavailable';
  override readonly retryAfterSeconds = 1;

  constructor() {
    super(503, DatabaseBusy.code, 'The database is busy with other writers: retry after the seconds given by Retry-After; nothing was written');
  }
}

/** Anything unexpected: answered with the request id, never the error itself (server/http/errors.ts). */
export class ServerError extends AppError {
  static readonly code = 'server_error';

  constructor(requestId: string) {
    super(500, ServerError.code, `Something went wrong on our side (request ${requestId})`);
  }
}

/** The database is unreachable: the request wrote nothing and may be retried later. */
export class ServiceUnavailable extends AppError {
  static readonly code = 'service_unavailable';

  constructor(message = 'The service cannot reach its database right now: retry later; nothing was written') {
    super(503, ServiceUnavailable.code, message);
  }
}
