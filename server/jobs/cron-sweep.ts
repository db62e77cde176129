/**
 * A sweep node-cron runs in each server process every few seconds (overdue invoices, reminders,
 * recurring issuance): one sweep at a time per process, stopped with the server, and a sweep that
 * fails is logged and left to the next one. A subclass says what one sweep does.
 */
import cron, { ScheduledTask } from 'node-cron';
import { Logger } from 'pino';

/** node-cron's expression for every `seconds`: a divisor of 60 below a minute, whole minutes that divide an hour above. */
export function everySeconds(seconds: number): string {
  return seconds < 60 ? `*/${seconds} * * * * *` : `0 */${Math.round(seconds / 60)} * * * *`;
}

export abstract class CronSweep {
  private task?: ScheduledTask;
  private sweeping: Promise<number> | null = null;
  /** Set by `stop`: a sweep under way stops at its next item. */
  protected stopped = false;

  protected constructor(
    protected readonly logger: Logger,
    /** What the logs call it: `overdue sweep`. */
    private readonly name: string,
  ) {}

  /** Sweeps every `seconds`. */
  start(seconds: number): void {
    this.task = cron.schedule(everySeconds(seconds), () => void this.sweep());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.task?.stop();
    await this.sweeping;
  }

  /** One sweep, or the one under way in this process; resolves with how many things it did (0 when it failed). */
  sweep(): Promise<number> {
    if (this.sweeping) return this.sweeping;
    this.sweeping = (async () => {
      try {
        return await this.sweepOnce();
      } catch (err) {
        this.logger.error({ err }, `${this.name} failed; the next sweep retries`);
        return 0;
      } finally {
        this.sweeping = null;
      }
    })();
    return this.sweeping;
  }

  protected abstract sweepOnce(): Promise<number>;
}
