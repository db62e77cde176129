/** Bearer authentication: turns `Authorization: Bearer <key>` into `req.credential`, or 401. */
import { Request, Response } from 'express';
import { Credential, CredentialLookup } from '../auth/credential';
import { Scope, grants } from '../auth/scopes';
import { Forbidden } from '../errors';
import { AuthFailureLimit } from './rate-limit';

function bearerToken(req: Request): string | null {
  const header = req.get('authorization');
  const match = header?.match(/^Bearer[ ]+(\S+)\s*$/i);
  return match ? match[1] : null;
}

/** The request's credential, also set as `req.credential`; throws the 401 (or 429 past the failure limit) otherwise. */
export async function authenticate(req: Request, res: Response, credentials: CredentialLookup, failures: AuthFailureLimit): Promise<Credential> {
  const token = bearerToken(req);
  const credential = token ? await credentials.resolve(token) : null;
  if (!credential) throw await failures.refuse(req.ip ?? 'unknown', res);
  req.credential = credential;
  return credential;
}

/**
 * Allows the request when the credential holds any of `accepted`; the 403 names the first as the
 * required scope (the endpoint table's scope), with the scopes the key does hold.
 */
export function requireScope(cred: Credential, accepted: readonly Scope[]): void {
  if (!accepted.some((scope) => grants(cred.scopes, scope))) throw new Forbidden(accepted[0], cred.scopes);
}
