/**
 * The owner's session on the authorize pages and what guards signing in: the session cookie holds
 * a random token of a server-side session (owners/service.ts), so signing out and a password reset
 * end it; the pre-sign-in cookie holds a random value that the sign-in form's token is bound to, so
 * another site cannot sign the browser in to the attacker's account (login CSRF) even where the
 * browser sends no `Sec-Fetch-Site`. Both are HttpOnly, SameSite=Lax (never sent with another
 * site's post; sent when the app's redirect brings the browser here, a cross-site navigation, so a
 * second sign-in tab finds the cookie and keeps it), Secure behind https; the pre-sign-in cookie
 * is also `__Host-` there.
 */
import { randomBytes } from 'node:crypto';
import { CookieOptions } from 'express';
import { LRUCache } from 'lru-cache';
import { OwnerService, SESSION_SECONDS } from '../owners/service';
import { Cookies } from '../pages/route';

const SESSION_COOKIE = 'owner_session';
const SESSION_TOKEN = /^[0-9A-Za-z]{43}$/;
const SIGN_IN_VALUE = /^[A-Za-z0-9_-]{43}$/;
/** As long as the sign-in form's token stays valid (a day, pages/form-token.ts). */
const SIGN_IN_COOKIE_SECONDS = 24 * 3600;

export interface OwnerSession {
  ownerId: number;
  /** The session's secret token: what its forms' tokens are bound to. */
  token: string;
}

export class OwnerSessions {
  private readonly signInCookie: string;

  constructor(
    private readonly owners: OwnerService,
    private readonly secure: boolean,
  ) {
    this.signInCookie = secure ? '__Host-owner_sign_in' : 'owner_sign_in';
  }

  private sessionCookieOptions(): CookieOptions {
    return { httpOnly: true, sameSite: 'lax', secure: this.secure, path: '/oauth' };
  }

  async start(cookies: Cookies, ownerId: number): Promise<void> {
    const token = await this.owners.startSession(ownerId);
    cookies.set(SESSION_COOKIE, token, { ...this.sessionCookieOptions(), maxAge: SESSION_SECONDS * 1000 });
  }

  /** The signed-in owner and the session's token, or null. */
  async current(cookies: Cookies): Promise<OwnerSession | null> {
    const token = cookies.get(SESSION_COOKIE);
    if (!token || !SESSION_TOKEN.test(token)) return null;
    const ownerId = await this.owners.sessionOwner(token);
    return ownerId === null ? null : { ownerId, token };
  }

  /** Ends the session on the server and drops its cookie. */
  async end(cookies: Cookies, session: OwnerSession): Promise<void> {
    await this.owners.endSession(session.token);
    cookies.clear(SESSION_COOKIE, this.sessionCookieOptions());
  }

  /**
   * The browser's pre-sign-in value, set now if it has none (kept if it has, so two sign-in tabs
   * both work). Only a page of ours can read it into a form token; another site cannot.
   */
  signInBinding(cookies: Cookies): string {
    const existing = this.signInBindingOf(cookies);
    if (existing) return existing;
    const value = randomBytes(32).toString('base64url');
    cookies.set(this.signInCookie, value, { httpOnly: true, sameSite: 'lax', secure: this.secure, path: '/', maxAge: SIGN_IN_COOKIE_SECONDS * 1000 });
    return value;
  }

  /** The pre-sign-in value the browser sent, or null: a sign-in post without it is refused. */
  signInBindingOf(cookies: Cookies): string | null {
    const value = cookies.get(this.signInCookie);
    return value && SIGN_IN_VALUE.test(value) ? value : null;
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
