/** The one place errors become responses: the contract's bodies, and no stack trace ever leaves. */
import { ErrorRequestHandler, RequestHandler } from 'express';
import Joi from 'joi';
import { isDatabaseBusy, isDatabaseUnavailable, valueDoesNotFit } from '../db/errors';
import { AppError, BadRequest, DatabaseBusy, NotFound, PayloadTooLarge, ServerError, ServiceUnavailable, ValidationFailed } from '../errors';
import { fieldErrors } from '../validation';
import { unsupportedContentEncoding } from './document-body';

interface HttpishError {
  type?: string;
  status?: number;
  statusCode?: number;
  expose?: boolean;
  /** body-parser's, with `encoding.unsupported`: the Content-Encoding it cannot undo. */
  encoding?: string;
}

/** Errors raised by body-parser and Express itself, in the contract's vocabulary. */
function fromHttpError(err: HttpishError): AppError | null {
  switch (err.type) {
    case 'entity.parse.failed':
      return new BadRequest('The request body is not valid JSON');
    case 'entity.too.large':
      return new PayloadTooLarge();
    case 'charset.unsupported':
      return new BadRequest('The request body must be UTF-8 JSON');
    case 'encoding.unsupported':
      return unsupportedContentEncoding(err.encoding ?? 'unknown');
    default:
      break;
  }
  const status = err.status ?? err.statusCode;
  if (status && status >= 400 && status < 500) return new AppError(status, BadRequest.code, 'The request could not be understood');
  return null;
}

/** A value the database refused to store: the client's input, so a 422, never a 500. */
function fromDataError(column: string | undefined): ValidationFailed {
  const message = 'A value is too long or not valid for the field it is stored in';
  return new ValidationFailed(column ? { [column]: ['is too long or not a valid value for this field'] } : {}, message);
}

export function toAppError(err: unknown): AppError | null {
  if (err instanceof AppError) return err;
  if (isDatabaseUnavailable(err)) return new ServiceUnavailable();
  if (isDatabaseBusy(err)) return new DatabaseBusy();
  const misfit = valueDoesNotFit(err);
  if (misfit) return fromDataError(misfit.column);
  // Express could not percent-decode a path parameter: no record has such an id.
  if (err instanceof URIError) return new NotFound('Record');
  if (err instanceof Joi.ValidationError) return new ValidationFailed(fieldErrors(err));
  if (err && typeof err === 'object') return fromHttpError(err);
  return null;
}

export const notFoundRoute: RequestHandler = (req) => {
  throw new NotFound(`Route ${req.method} ${req.path}`);
};

export const errorHandler: ErrorRequestHandler = (err, req, res, next) => {
  if (res.headersSent) return next(err);
  const known = toAppError(err);
  if (!known) {
    req.log?.error({ err }, 'unhandled error');
    const failure = new ServerError(typeof req.id === 'string' ? req.id : 'unknown');
    res.status(failure.status).json({ error: failure.code, message: failure.message });
    return;
  }
  // A known failure on our side (e.g. the mail server): the client gets the code, the log gets the cause.
  if (known.status >= 500) req.log?.error({ err: known }, 'request failed');
  // The input validation let through a value the database refused: worth fixing, so logged.
  else if (known !== err && valueDoesNotFit(err)) req.log?.warn({ err }, 'a value did not fit its database column');
  if (known.retryAfterSeconds !== undefined) res.set('Retry-After', String(known.retryAfterSeconds));
  res.status(known.status).json({
    error: known.code,
    message: known.message,
    ...(known.details ? { errors: known.details } : {}),
    ...known.extra,
  });
};
