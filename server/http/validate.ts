/** Request shape checks that come before validation: which methods carry a body, and that it is JSON. */
import { Request } from 'express';
import { BadRequest } from '../errors';

export const BODY_METHODS = ['POST', 'PATCH', 'PUT'];

/**
 * Every string and key of a parsed JSON body is well-formed Unicode. JSON's `\ud800` escapes can
 * spell an unpaired surrogate, which MariaDB would silently store as U+FFFD (and SQLite as given),
 * so the record would differ from what was answered. Walked without recursion: a body may nest
 * deeper than the call stack.
 */
const UNPAIRED_SURROGATE = /\p{Cs}/u;

export function requireWellFormedStrings(body: unknown): void {
  const pending: unknown[] = [body];
  while (pending.length) {
    const value = pending.pop();
    if (typeof value === 'string') {
      if (UNPAIRED_SURROGATE.test(value)) throw new BadRequest('The request body holds a string with an unpaired surrogate (such as \\ud800): text must be well-formed Unicode');
    } else if (value && typeof value === 'object') {
      // One by one: spreading an array of half a million numbers would overflow the call stack.
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
        if (!Array.isArray(value)) pending.push(key);
        pending.push(item);
      }
    }
  }
}

/** POST, PATCH and PUT bodies must be JSON: another content type is a 400, not silently ignored. */
export function requireJsonBody(req: Request): void {
  const length = req.get('content-length');
  const hasBody = req.get('transfer-encoding') !== undefined || (length !== undefined && length !== '0');
  if (hasBody && !req.is(['application/json', 'application/*+json'])) {
    throw new BadRequest('Content-Type must be application/json');
  }
}
