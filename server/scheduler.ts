/** Recurring jobs of a serving process (node-cron): the expiry of idempotency keys, the reconciliation of pending refunds. */
import cron, { ScheduledTask } from 'node-cron';
import { Logger } from 'pino';
import { Database } from './db/database';
import { purgeExpiredIdempotencyKeys } from './http/idempotency';
import { RefundService } from './refunds/service';

export function startScheduler(db: Database, logger: Logger, refunds: RefundService): { stop(): void } {
  const tasks: ScheduledTask[] = [
    // Pending refunds whose outcome at the gateway is not known (each claimed by one process at a time).
    cron.schedule('*/3 * * * *', async () => {
      try {
        const reconciled = await refunds.reconcileDue();
        if (reconciled) logger.info({ reconciled }, 'pending refunds reconciled');
      } catch (err) {
        logger.error({ err }, 'refund reconciliation failed; the next sweep retries');
      }
    }),
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
