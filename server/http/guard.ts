/**
 * The middlewares every partner endpoint runs, in order: authenticate, rate-limit, check the scope,
 * parse the JSON body, then (POST only) honour an Idempotency-Key. Routes declare
 * `guard('clients:read')` and nothing else. Bodies are parsed only for authenticated callers.
 */
import express, { RequestHandler } from 'express';
import { Scope } from '../auth/scopes';
import { Database } from '../db/database';
import { KeyService } from '../keys/service';
import { authenticate, requireScope } from './auth';
import { requireJsonBody } from './validate';
import { idempotency } from './idempotency';
import { AuthFailureLimit, credentialRateLimit, RateLimitOptions } from './rate-limit';

export type Guard = (...acceptedScopes: Scope[]) => RequestHandler[];

export function createGuard(deps: { db: Database; keys: KeyService; limits: RateLimitOptions }): Guard {
  const before = [authenticate(deps.keys, new AuthFailureLimit(deps.limits)), ...credentialRateLimit(deps.limits)];
  const after = [
    requireJsonBody,
    express.json({ limit: '1mb', type: ['application/json', 'application/*+json'] }),
    idempotency(deps.db),
  ];
  return (...acceptedScopes) => [...before, ...(acceptedScopes.length ? [requireScope(...acceptedScopes)] : []), ...after];
}
