/** Bearer authentication: turns `Authorization: Bearer <key>` into `req.credential`, or 401. */
import { Request, RequestHandler } from 'express';
import { Scope, grants } from '../auth/scopes';
import { Forbidden } from '../errors';
import { Credentials } from '../auth/credentials';
import { AuthFailureLimit } from './rate-limit';
import { credentialOf } from './request';

function bearerToken(req: Request): string | null {
  const header = req.get('authorization');
  const match = header?.match(/^Bearer[ ]+(\S+)\s*$/i);
  return match ? match[1] : null;
}

export function authenticate(credentials: Credentials, failures: AuthFailureLimit): RequestHandler {
  return async (req, res, next) => {
    const token = bearerToken(req);
    const credential = token ? await credentials.resolve(token) : null;
    if (!credential) throw await failures.refuse(req.ip ?? 'unknown', res);
    req.credential = credential;
    next();
  };
}

/**
 * Allows the request when the credential holds any of `accepted`; the 403 names the first as the
 * required scope (the endpoint table's scope), with the scopes the key does hold.
 */
export function requireScope(...accepted: Scope[]): RequestHandler {
  return (req, _res, next) => {
    const cred = credentialOf(req);
    if (!accepted.some((scope) => grants(cred.scopes, scope))) throw new Forbidden(accepted[0], cred.scopes);
    next();
  };
}
