/** Recurring jobs of a serving process (node-cron): today the expiry of idempotency keys. */
import cron, { ScheduledTask } from 'node-cron';
import { Logger } from 'pino';
import { Database } from './db/database';
import { purgeExpiredIdempotencyKeys } from './http/idempotency';

export function startScheduler(db: Database, logger: Logger): { stop(): void } {
  const tasks: ScheduledTask[] = [
    cron.schedule('17 * * * *', async () => {
      try {
        const purged = await purgeExpiredIdempotencyKeys(db);
        if (purged) logger.info({ purged }, 'expired idempotency keys purged');
      } catch (err) {
        logger.error({ err }, 'idempotency key purge failed');
      }
    }),
  ];
  return { stop: () => tasks.forEach((t) => void t.stop()) };
}
