/**
 * The owner's session on the authorize pages (a signed cookie: HttpOnly, SameSite=Lax, Secure
 * behind https) and the throttle on failed sign-ins, per account and per address.
 */
import { Request, Response } from 'express';
import { LRUCache } from 'lru-cache';
import { FormTokens } from '../pages/form-token';

const COOKIE = 'owner_session';
const SESSION_PURPOSE = 'owner session';

export class OwnerSessions {
  constructor(
    private readonly tokens: FormTokens,
    private readonly secure: boolean,
  ) {}

  start(res: Response, ownerId: number): void {
    const value = `${ownerId}.${this.tokens.issue(SESSION_PURPOSE, String(ownerId))}`;
    res.cookie(COOKIE, value, { httpOnly: true, sameSite: 'lax', secure: this.secure, path: '/oauth', maxAge: 12 * 3600 * 1000 });
  }

  /** The signed-in owner's id, or null. */
  ownerOf(req: Request): number | null {
    const raw = (req.get('cookie') ?? '')
      .split(';')
      .map((part) => part.trim())
      .find((part) => part.startsWith(`${COOKIE}=`))
      ?.slice(COOKIE.length + 1);
    const match = raw ? /^([1-9][0-9]{0,15})\.(.+)$/.exec(decodeURIComponent(raw)) : null;
    return match && this.tokens.verify(SESSION_PURPOSE, match[1], match[2]) ? Number(match[1]) : null;
  }
}

/** At most `limit` failed sign-ins per account and per address in `windowMs`; a success clears the account's count. */
export class SignInThrottle {
  private readonly failures: LRUCache<string, number>;

  constructor(
    private readonly limit = 5,
    windowMs = 15 * 60 * 1000,
  ) {
    this.failures = new LRUCache({ max: 100_000, ttl: windowMs });
  }

  blocked(email: string, ip: string): boolean {
    return (this.failures.get(`account:${email.toLowerCase()}`) ?? 0) >= this.limit || (this.failures.get(`ip:${ip}`) ?? 0) >= this.limit * 4;
  }

  failed(email: string, ip: string): void {
    for (const key of [`account:${email.toLowerCase()}`, `ip:${ip}`]) this.failures.set(key, (this.failures.get(key) ?? 0) + 1, { noUpdateTTL: true });
  }

  succeeded(email: string): void {
    this.failures.delete(`account:${email.toLowerCase()}`);
  }
}
