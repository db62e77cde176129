/**
 * Two limits: 120 requests a minute per credential (express-rate-limit, fixed window), and failed
 * authentications per client IP. Both count in process, or in Redis when REDIS_URL is set so that
 * every server process shares one counter.
 */
import { RequestHandler } from 'express';
import { MemoryStore, rateLimit, Store } from 'express-rate-limit';
import type Redis from 'ioredis';
import { RedisReply, RedisStore } from 'rate-limit-redis';
import { RateLimited, Unauthorized } from '../errors';
import { credentialOf } from './request';

export const WINDOW_MS = 60_000;

export interface RateLimitOptions {
  perMinute: number;
  authFailuresPerMinute: number;
  redis?: Redis;
  redisPrefix: string;
}

function makeStore(options: RateLimitOptions, name: string): Store {
  const { redis } = options;
  if (!redis) return new MemoryStore();
  return new RedisStore({
    prefix: `${options.redisPrefix}${name}:`,
    sendCommand: (command: string, ...args: string[]) => redis.call(command, ...args) as Promise<RedisReply>,
  });
}

function secondsUntil(reset: Date | undefined): number {
  return reset ? Math.max(0, Math.ceil((reset.getTime() - Date.now()) / 1000)) : Math.ceil(WINDOW_MS / 1000);
}

/** Per-credential limit. Every authenticated response carries X-RateLimit-Limit/-Remaining and Retry-After. */
export function credentialRateLimit(options: RateLimitOptions): RequestHandler[] {
  const limiter = rateLimit({
    windowMs: WINDOW_MS,
    limit: options.perMinute,
    store: makeStore(options, 'requests'),
    keyGenerator: (req) => credentialOf(req).subject,
    legacyHeaders: true,
    standardHeaders: false,
    handler: (_req, _res, next) => next(new RateLimited()),
  });
  const retryAfter: RequestHandler = (req, res, next) => {
    res.set('Retry-After', String(secondsUntil(req.rateLimit?.resetTime)));
    next();
  };
  return [limiter, retryAfter];
}

/** Counts failed authentications per IP; past the limit that IP gets 429 before its key is even looked at. */
export class AuthFailureLimit {
  private readonly store: Store;

  constructor(private readonly options: RateLimitOptions) {
    this.store = makeStore(options, 'auth-failures');
    void this.store.init?.({ windowMs: WINDOW_MS } as Parameters<NonNullable<Store['init']>>[0]);
  }

  /** Throws 429 (with Retry-After) when the IP has used up its failures for this window. */
  async check(ip: string, setRetryAfter: (seconds: number) => void): Promise<void> {
    const info = await this.store.get?.(ip);
    if (info && info.totalHits >= this.options.authFailuresPerMinute) {
      setRetryAfter(secondsUntil(info.resetTime));
      throw new RateLimited('Too many failed authentications from this address: wait as given by Retry-After');
    }
  }

  async recordFailure(ip: string): Promise<Unauthorized> {
    await this.store.increment(ip);
    return new Unauthorized();
  }
}
