/** What the HTTP layer attaches to a request, and typed access to it from route handlers. */
import { Request, RequestHandler, Response } from 'express';
import type { RateLimitInfo } from 'express-rate-limit';
import { Credential } from '../auth/credential';
import { NotFound, Unauthorized } from '../errors';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      credential?: Credential;
      /** Set by express-rate-limit. */
      rateLimit?: RateLimitInfo;
    }
  }
}

export function credentialOf(req: Request): Credential {
  if (!req.credential) throw new Unauthorized();
  return req.credential;
}

const MAX_ID = Number.MAX_SAFE_INTEGER;

/** `{id}` is a positive integer; anything else names no record, so it is a 404 and never reaches SQL. */
export function recordId(req: Request, what: string, param = 'id'): number {
  const raw = req.params[param];
  if (typeof raw !== 'string' || !/^[1-9][0-9]{0,15}$/.test(raw) || Number(raw) > MAX_ID) throw new NotFound(what);
  return Number(raw);
}

/** Runs an Express middleware as a step: resolves when it calls `next()`, rejects with what it passes on or throws. */
export function asStep(middleware: RequestHandler, req: Request, res: Response): Promise<void> {
  return new Promise((resolve, reject) => {
    Promise.resolve(middleware(req, res, (err?: unknown) => (err ? reject(err as Error) : resolve()))).catch(reject);
  });
}
