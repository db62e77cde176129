/**
 * Two limits: 120 requests a minute per credential (fixed window, counted in express-rate-limit's stores), and failed
 * authentications per client IP. Both count in process, or in Redis when REDIS_URL is set so that
 * every server process shares one counter. While Redis cannot be reached, each process counts in
 * memory (the headers still go out), says so in the log once, and returns to Redis when it answers.
 */
import { Request, RequestHandler, Response } from 'express';
import { ClientRateLimitInfo, MemoryStore, Options, rateLimit, Store } from 'express-rate-limit';
import type Redis from 'ioredis';
import type { Logger } from 'pino';
import { RedisReply, RedisStore } from 'rate-limit-redis';
import { systemClock } from '../clock';
import { AppError, RateLimited, Unauthorized } from '../errors';
import { credentialOf } from './request';

export const WINDOW_MS = 60_000;

export interface RateLimitOptions {
  perMinute: number;
  authFailuresPerMinute: number;
  redis?: Redis;
  redisPrefix: string;
  /** Where a Redis outage, and the return to Redis, are reported (once each). */
  logger?: Logger;
}

/**
 * Redis's counter while it answers; a counter in this process while it does not. The Redis store
 * loads its scripts in `init` and keeps a failed load for ever (it reloads only on NOSCRIPT): after
 * any failure `init` runs again, whose next count waits for the new load, so a load that timed out
 * (a busy machine at boot) does not keep this process counting alone.
 */
class RedisWithFallback implements Store {
  readonly localKeys = false;
  private readonly memory = new MemoryStore();
  private degraded = false;
  private options: Options | undefined;

  constructor(
    private readonly redis: Store,
    private readonly name: string,
    private readonly logger: Logger | undefined,
  ) {}

  init(options: Options): void {
    this.options = options;
    this.memory.init(options);
    this.loadScripts();
  }

  private loadScripts(): void {
    if (this.options) void Promise.resolve(this.redis.init?.(this.options)).catch(() => undefined);
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    return this.either((store) => store.increment(key));
  }

  async decrement(key: string): Promise<void> {
    await this.either((store) => store.decrement(key));
  }

  async resetKey(key: string): Promise<void> {
    await this.either((store) => store.resetKey(key));
  }

  private async either<T>(work: (store: Store) => Promise<T> | T): Promise<T> {
    try {
      const result = await work(this.redis);
      if (this.degraded) {
        this.degraded = false;
        this.logger?.info({ limit: this.name }, 'redis answers again: rate limits are counted in Redis again');
      }
      return result;
    } catch (err) {
      this.loadScripts();
      if (!this.degraded) {
        this.degraded = true;
        this.logger?.warn({ limit: this.name, reason: (err as Error).message }, 'redis unreachable: rate limits are counted in this process until it answers');
      }
      return work(this.memory);
    }
  }
}

function makeStore(options: Pick<RateLimitOptions, 'redis' | 'redisPrefix' | 'logger'>, name: string): Store {
  const { redis } = options;
  if (!redis) return new MemoryStore();
  const shared = new RedisStore({
    prefix: `${options.redisPrefix}${name}:`,
    sendCommand: (command: string, ...args: string[]) => redis.call(command, ...args) as Promise<RedisReply>,
  });
  return new RedisWithFallback(shared, name, options.logger);
}

/** By the real time, as express-rate-limit counts its windows by it. */
function secondsUntil(reset: Date | undefined): number {
  return reset ? Math.max(0, Math.ceil((reset.getTime() - systemClock.now().getTime()) / 1000)) : Math.ceil(WINDOW_MS / 1000);
}

/**
 * A fixed-window count per key in an express-rate-limit store (Redis's, falling back to this
 * process's, or this process's alone). The stores are used directly rather than through the
 * library's middleware, whose per-request chain of promises and checks, on every authenticated
 * request, cost more than the count itself.
 */
class WindowCounter {
  private readonly store: Store;

  constructor(options: Pick<RateLimitOptions, 'redis' | 'redisPrefix' | 'logger'>, name: string) {
    this.store = makeStore(options, name);
    void Promise.resolve(this.store.init?.({ windowMs: WINDOW_MS } as Parameters<NonNullable<Store['init']>>[0])).catch(() => undefined);
  }

  /** Counts one more for `key`; undefined when the store fails (beyond the Redis fallback): the caller lets the request through. */
  async count(key: string): Promise<ClientRateLimitInfo | undefined> {
    return Promise.resolve(this.store.increment(key)).catch(() => undefined);
  }
}

/** Per-credential limit, as a step of the guard. Every authenticated response carries X-RateLimit-Limit/-Remaining/-Reset and Retry-After. */
export function credentialRateLimit(options: RateLimitOptions): (req: Request, res: Response) => Promise<void> {
  const requests = new WindowCounter(options, 'requests');
  return async (req, res) => {
    const counted = await requests.count(credentialOf(req).subject);
    if (counted) {
      res.setHeader('X-RateLimit-Limit', String(options.perMinute));
      res.setHeader('X-RateLimit-Remaining', String(Math.max(options.perMinute - counted.totalHits, 0)));
      if (counted.resetTime) res.setHeader('X-RateLimit-Reset', String(Math.ceil(counted.resetTime.getTime() / 1000)));
    }
    res.setHeader('Retry-After', String(secondsUntil(counted?.resetTime)));
    if (counted && counted.totalHits > options.perMinute) throw new RateLimited();
  };
}

/**
 * Per client IP limit of a public route, which has no credential to count by (a PDF download from
 * the payment page): past it, `refuse` answers, with Retry-After set.
 */
export function addressRateLimit(
  options: Pick<RateLimitOptions, 'perMinute' | 'redis' | 'redisPrefix' | 'logger'>,
  name: string,
  refuse: (res: Response) => void,
): RequestHandler {
  return rateLimit({
    windowMs: WINDOW_MS,
    limit: options.perMinute,
    store: makeStore(options, name),
    legacyHeaders: true,
    standardHeaders: false,
    handler: (req, res) => {
      res.setHeader('Retry-After', String(secondsUntil(req.rateLimit?.resetTime)));
      refuse(res);
    },
    passOnStoreError: true,
  });
}

/**
 * Counts failed authentications per client IP. Past the limit, that IP's failures get 429 instead
 * of 401 until the window resets; a valid key is never refused here, so clients sharing an address
 * (NAT, a proxy) cannot lock each other out.
 */
export class AuthFailureLimit {
  private readonly failures: WindowCounter;

  constructor(private readonly options: RateLimitOptions) {
    this.failures = new WindowCounter(options, 'auth-failures');
  }

  /** Counts one failure of `ip` and returns the error to answer it with. */
  async refuse(ip: string, res: Response): Promise<AppError> {
    const info = await this.failures.count(ip);
    if (!info || info.totalHits <= this.options.authFailuresPerMinute) return new Unauthorized();
    res.set({
      'X-RateLimit-Limit': String(this.options.authFailuresPerMinute),
      'X-RateLimit-Remaining': '0',
      'Retry-After': String(secondsUntil(info.resetTime)),
    });
    return new RateLimited('Too many failed authentications from this address: wait as given by Retry-After');
  }
}
