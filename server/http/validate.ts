/** Route middlewares that validate the body or the query string against a Joi schema. */
import { RequestHandler } from 'express';
import Joi from 'joi';
import { BadRequest } from '../errors';
import { validateInput, validateQuery } from '../validation';

export function body(schema: Joi.ObjectSchema): RequestHandler {
  return (req, _res, next) => {
    const raw: unknown = req.body ?? {};
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new BadRequest('The request body must be a JSON object');
    req.valid = { ...req.valid, body: validateInput(schema, raw) };
    next();
  };
}

export function query(schema: Joi.ObjectSchema): RequestHandler {
  return (req, _res, next) => {
    req.valid = { ...req.valid, query: validateQuery(schema, req.query) };
    next();
  };
}

export const BODY_METHODS = ['POST', 'PATCH', 'PUT'];

/** POST, PATCH and PUT bodies must be JSON: another content type is a 400, not silently ignored. */
export const requireJsonBody: RequestHandler = (req, _res, next) => {
  if (!BODY_METHODS.includes(req.method)) return next();
  const length = req.get('content-length');
  const hasBody = req.get('transfer-encoding') !== undefined || (length !== undefined && length !== '0');
  if (hasBody && !req.is(['application/json', 'application/*+json'])) {
    throw new BadRequest('Content-Type must be application/json');
  }
  next();
};
