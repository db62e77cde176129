/** Request shape checks that come before validation: which methods carry a body, and that it is JSON. */
import { Request } from 'express';
import { BadRequest } from '../errors';

export const BODY_METHODS = ['POST', 'PATCH', 'PUT'];

/** POST, PATCH and PUT bodies must be JSON: another content type is a 400, not silently ignored. */
export function requireJsonBody(req: Request): void {
  const length = req.get('content-length');
  const hasBody = req.get('transfer-encoding') !== undefined || (length !== undefined && length !== '0');
  if (hasBody && !req.is(['application/json', 'application/*+json'])) {
    throw new BadRequest('Content-Type must be application/json');
  }
}
