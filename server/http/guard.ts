/**
 * The middlewares every partner endpoint runs before its own steps, in order: authenticate,
 * rate-limit, check the scope, parse the JSON body. Bodies are parsed only for authenticated callers.
 */
import express, { RequestHandler } from 'express';
import { Scope } from '../auth/scopes';
import { Credentials } from '../auth/credentials';
import { authenticate, requireScope } from './auth';
import { BODY_METHODS, requireJsonBody } from './validate';
import { AuthFailureLimit, credentialRateLimit, RateLimitOptions } from './rate-limit';

export type Guard = (...acceptedScopes: Scope[]) => RequestHandler[];

export function createGuard(deps: { credentials: Credentials; limits: RateLimitOptions }): Guard {
  const before = [authenticate(deps.credentials, new AuthFailureLimit(deps.limits)), ...credentialRateLimit(deps.limits)];
  const parseJson = express.json({ limit: '1mb', type: ['application/json', 'application/*+json'] });
  // Only methods that take a body read one: a GET or DELETE with a body is answered as if it had none.
  const parseBody: RequestHandler = (req, res, next) => (BODY_METHODS.includes(req.method) ? parseJson(req, res, next) : next());
  const after = [requireJsonBody, parseBody];
  return (...acceptedScopes) => [...before, ...(acceptedScopes.length ? [requireScope(...acceptedScopes)] : []), ...after];
}
