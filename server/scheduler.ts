/**
 * The recurring work of a serving process: the job sweeps (each a `start(seconds)` of the engine's
 * queues or the webhook worker, see jobs/engine.ts) and the one task that is no leased job, the
 * expiry of idempotency keys (node-cron).
 */
import cron from 'node-cron';
import { Logger } from 'pino';
import { Database } from './db/database';
import { purgeExpiredIdempotencyKeys } from './http/idempotency';

/** A sweep of leased jobs: retries, and anything a nudge missed. */
export interface Sweep {
  start(seconds: number): void;
}

export function startScheduler(db: Database, logger: Logger, sweeps: [Sweep, number][]): { stop(): void } {
  for (const [sweep, seconds] of sweeps) sweep.start(seconds);
  const purge = cron.schedule('17 * * * *', async () => {
    try {
      const purged = await purgeExpiredIdempotencyKeys(db);
      if (purged) logger.info({ purged }, 'expired idempotency keys purged');
    } catch (err) {
      logger.error({ err }, 'idempotency key purge failed');
    }
  });
  return { stop: () => void purge.stop() };
}
