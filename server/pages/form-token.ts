/**
 * CSRF protection for hosted-page forms without cookies (a cookie would not reach a form inside
 * another site's iframe): each form carries a token signed with a key derived from the application
 * key and bound to the page's own link token and its purpose, valid for a day.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { Clock, systemClock } from '../clock';

const VALID_FOR_SECONDS = 24 * 60 * 60;

export class FormTokens {
  private readonly key: Buffer;

  constructor(
    appKey: Buffer,
    private readonly clock: Clock = systemClock,
  ) {
    this.key = Buffer.from(hkdfSync('sha256', appKey, Buffer.alloc(0), 'hosted page form tokens', 32));
  }

  /** A token for a form of the page `pageToken` that does `purpose` (`pay`, `sign`…). */
  issue(purpose: string, pageToken: string, now = this.clock.now().getTime()): string {
    const expires = Math.floor(now / 1000) + VALID_FOR_SECONDS;
    return `${expires}.${this.mac(purpose, pageToken, expires)}`;
  }

  /** Whether `token` was issued for this purpose and page and has not expired. */
  verify(purpose: string, pageToken: string, token: unknown, now = this.clock.now().getTime()): boolean {
    if (typeof token !== 'string') return false;
    const match = /^([0-9]{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
    if (!match) return false;
    const expires = Number(match[1]);
    if (expires < now / 1000) return false;
    const expected = Buffer.from(this.mac(purpose, pageToken, expires));
    const given = Buffer.from(match[2]);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private mac(purpose: string, pageToken: string, expires: number): string {
    return createHmac('sha256', this.key).update(`${purpose}\n${pageToken}\n${expires}`).digest('base64url');
  }
}
