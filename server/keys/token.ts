/** API key values: `svc_test_`/`svc_live_` + 40 random base62 characters, known to the server only by hash. */
import { createHash, randomInt, timingSafeEqual } from 'node:crypto';

export type Mode = 'test' | 'live';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 40;
const KEY_PATTERN = /^svc_(test|live)_[0-9A-Za-z]{32,128}$/;

/** Uniformly random base62 text (randomInt rejects biased draws). */
export function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i += 1) out += BASE62[randomInt(BASE62.length)];
  return out;
}

export function generateKey(mode: Mode): string {
  return `svc_${mode}_${randomBase62(RANDOM_LENGTH)}`;
}

export function looksLikeKey(token: string): boolean {
  return KEY_PATTERN.test(token);
}

export function hashKey(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** What may be shown of a key after creation: its prefix and its last four characters. */
export function displayParts(token: string): { prefix: string; last4: string } {
  return { prefix: token.slice(0, 'svc_test_'.length + 4), last4: token.slice(-4) };
}
