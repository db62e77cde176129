/** The retry schedule of the contract: at once, then after 10 s, 30 s, 90 s, 270 s and 810 s (±10 %), then failed. */
export const RETRY_DELAYS_SECONDS = [10, 30, 90, 270, 810] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;

/**
 * When the next attempt is due after `attemptsMade` failed ones, or null when none is left.
 * `random` in [0, 1) spreads retries by ±10 % so receivers that come back are not hit all at once.
 */
export function nextAttemptAfter(attemptsMade: number, now: Date, random: number = Math.random()): Date | null {
  const delay = RETRY_DELAYS_SECONDS[attemptsMade - 1];
  if (delay === undefined) return null;
  const jittered = delay * 1000 * (0.9 + 0.2 * random);
  return new Date(now.getTime() + Math.round(jittered));
}
