/** Typed errors with stable codes, shared by the HTTP layer, the CLI and the scheduled jobs. */
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
  constructor(message: string, details?: FieldErrors) {
    super(400, 'bad_request', message, details);
  }
}

export class Unauthorized extends AppError {
  constructor(message = 'A valid API key is required: send it as "Authorization: Bearer <key>"') {
    super(401, 'unauthorized', message);
  }
}

export class Forbidden extends AppError {
  constructor(requiredScope: string, keyScopes: readonly string[]) {
    super(403, 'forbidden', `This key lacks the scope ${requiredScope}`, undefined, {
      required_scope: requiredScope,
      key_scopes: [...keyScopes],
    });
  }
}

export class NotFound extends AppError {
  constructor(what: string) {
    super(404, 'not_found', `${what} not found`);
  }
}

export class Conflict extends AppError {
  constructor(code: string, message: string) {
    super(409, code, message);
  }
}

export class ValidationFailed extends AppError {
  constructor(details: FieldErrors, message = 'The request has invalid fields') {
    super(422, 'validation_failed', message, details);
  }
}

/** A business rule refuses the request in the record's current state (e.g. editing a sent invoice). */
export class InvalidState extends AppError {
  constructor(message: string) {
    super(422, 'invalid_state', message);
  }
}

export class RateLimited extends AppError {
  constructor(message = 'Too many requests: wait as given by Retry-After') {
    super(429, 'rate_limited', message);
  }
}

/** A payment gateway refused a request or could not be reached: nothing was changed here. */
export class GatewayError extends AppError {
  constructor(message: string) {
    super(502, 'gateway_error', message);
  }
}

/** Too many PDFs wait for a thread: this one was not started (see pdf/pool.ts). */
export class PdfBusy extends AppError {
  override readonly retryAfterSeconds = 5;

  constructor() {
    super(503, 'service_unavailable', 'Too many PDFs are being made right now: retry after the seconds given by Retry-After');
  }
}

/**
 * SQLite: another process held the write lock past DATABASE_BUSY_TIMEOUT_MS. Nothing was written (the
 * transaction could not begin, or rolled back), so a retry is safe.
 */
export class DatabaseBusy extends AppError {
  override readonly retryAfterSeconds = 1;

  constructor() {
    super(503, 'service_unavailable', 'The database is busy with other writers: retry after the seconds given by Retry-After; nothing was written');
  }
}

/** The database is unreachable: the request wrote nothing and may be retried later. */
export class ServiceUnavailable extends AppError {
  constructor(message = 'The service cannot reach its database right now: retry later; nothing was written') {
    super(503, 'service_unavailable', message);
  }
}
