/**
 * The steps every partner endpoint runs before its own, in order: authenticate, rate-limit, check
 * the scope, parse the JSON body. Bodies are parsed only for authenticated callers. They run as one
 * function the route's handler awaits, not as a chain of Express middlewares: each middleware layer
 * costs the router a dispatch, and six of them were a tenth of a cached GET's time.
 */
import express, { Request, Response } from 'express';
import { CredentialLookup } from '../auth/credential';
import { Scope } from '../auth/scopes';
import { authenticate, requireScope } from './auth';
import { DocumentBody, documentReader } from './document-body';
import { asStep } from './request';
import { BODY_METHODS, requireJsonBody, requireWellFormedStrings } from './validate';
import { AuthFailureLimit, credentialRateLimit, RateLimitOptions } from './rate-limit';

/**
 * The guard of a route that accepts these scopes (and whose body is `document`, when it takes one
 * instead of JSON): resolves once the request may be handled, else rejects with the error to answer.
 */
export type Guard = (acceptedScopes: readonly Scope[], document?: DocumentBody<unknown>) => (req: Request, res: Response) => Promise<void>;

export function createGuard(deps: { credentials: CredentialLookup; limits: RateLimitOptions }): Guard {
  const failures = new AuthFailureLimit(deps.limits);
  const rateLimit = credentialRateLimit(deps.limits);
  const parseJson = express.json({ limit: '1mb', type: ['application/json', 'application/*+json'] });
  return (acceptedScopes, document) => {
    const readDocument = document && documentReader(document);
    return async (req, res) => {
      const credential = await authenticate(req, res, deps.credentials, failures);
      await rateLimit(req, res);
      if (acceptedScopes.length) requireScope(credential, acceptedScopes);
      // Only methods that take a body read one: a GET or DELETE with a body is answered as if it had none.
      if (!BODY_METHODS.includes(req.method)) return;
      if (readDocument) return readDocument(req, res);
      requireJsonBody(req);
      await asStep(parseJson, req, res);
      requireWellFormedStrings(req.body);
    };
  };
}
