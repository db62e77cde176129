/**
 * The time, injectable, and the one module that reads the system's (the linter refuses `new Date()`,
 * `Date.now()` and `performance.now()` elsewhere in server/, cli/ and plugin/). Two kinds of time:
 *
 * - a `Clock` says what time it is. `systemClock` is the real time: leases, expiries, caches, rate
 *   limits and retry schedules use it (injected, so retry schedules are tested by moving a clock, not
 *   by waiting minutes). `businessClock` is the time of the business a request or a job acts for:
 *   the records it writes (created_at, sent_at, paid_at…) get that time, which a test-mode business
 *   may have frozen (server/db/clocks.ts binds it; without a binding it is the real time);
 * - a `Stopwatch` measures how long something took or how long is left, monotonic whatever a clock says.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock standing still at `at` (a test-mode business's frozen time). */
export function frozenClock(at: Date): Clock {
  const time = at.getTime();
  return { now: () => new Date(time) };
}

const actingFor = new AsyncLocalStorage<Clock>();

/** The clock of the business being acted for in this async context; the real time when none is. */
export const businessClock: Clock = { now: () => (actingFor.getStore() ?? systemClock).now() };

/** Runs `work` with `clock` as the business clock of everything it calls. */
export function withBusinessClock<T>(clock: Clock, work: () => T): T {
  // Where no clock is bound the business clock is the real time already: binding it again would only
  // cost the request an async-context switch (every live request, and most test-mode ones, act so).
  if (clock === systemClock && actingFor.getStore() === undefined) return work();
  return actingFor.run(clock, work);
}

/** Runs `work` acting for no business (work that outlives a request, e.g. after its commit): the business clock is the real time again. */
export function withoutBusinessClock<T>(work: () => T): T {
  return actingFor.exit(work);
}

const DAY_MS = 86_400_000;

/** A time's UTC calendar date, `YYYY-MM-DD`: the date due dates and issue dates are compared with. */
export function utcDate(time: Date): string {
  return time.toISOString().slice(0, 10);
}

/** Today (UTC) by the clock of the business acted for (a test mode's may be frozen). */
export function todayUtc(): string {
  return utcDate(businessClock.now());
}

/** 00:00 UTC of a calendar date (`YYYY-MM-DD`). */
export function utcMidnight(date: string): Date {
  return new Date(`${date}T00:00:00.000Z`);
}

/** The first 00:00 UTC strictly after `time`. */
export function nextUtcMidnight(time: Date): Date {
  return new Date((Math.floor(time.getTime() / DAY_MS) + 1) * DAY_MS);
}

export interface Stopwatch {
  /** Milliseconds since the stopwatch started. */
  elapsedMs(): number;
}

export function startStopwatch(): Stopwatch {
  const started = performance.now();
  return { elapsedMs: () => performance.now() - started };
}
