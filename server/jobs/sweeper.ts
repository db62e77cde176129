/**
 * The sweep loop of a leased job table: claim what is due, work the claimed rows side by side, round
 * after round until nothing is due; node-cron sweeps every few seconds for retries and for anything
 * a nudge missed. Subclasses say how to claim and what one row's work is.
 */
import cron, { ScheduledTask } from 'node-cron';
import { Logger } from 'pino';

export abstract class Sweeper<Row> {
  private sweeping: Promise<number> | null = null;
  private again = false;
  private task?: ScheduledTask;
  protected stopped = false;

  protected constructor(
    protected readonly logger: Logger,
    private readonly label: string,
  ) {}

  protected abstract claim(): Promise<Row[]>;
  protected abstract work(row: Row): Promise<void>;

  /** Sweeps every `seconds` (node-cron). */
  start(seconds: number): void {
    this.task = cron.schedule(`*/${seconds} * * * * *`, () => void this.sweep());
  }

  /** Work has become due (a commit, a replay): sweep now, or again right after the running sweep. */
  nudge(): void {
    if (!this.stopped) void this.sweep();
  }

  /** Works everything due, round after round, and resolves with how many rows were worked. */
  sweep(): Promise<number> {
    if (this.sweeping) {
      this.again = true;
      return this.sweeping;
    }
    this.sweeping = (async () => {
      let worked = 0;
      try {
        do {
          this.again = false;
          for (;;) {
            const claimed = this.stopped ? [] : await this.claim();
            if (!claimed.length) break;
            await Promise.all(claimed.map((row) => this.work(row)));
            worked += claimed.length;
          }
        } while (this.again && !this.stopped);
      } catch (err) {
        this.logger.error({ err }, `${this.label} sweep failed; the next sweep retries`);
      } finally {
        this.sweeping = null;
      }
      return worked;
    })();
    return this.sweeping;
  }

  /** Stops sweeping and waits for the work under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.task?.stop();
    await this.sweeping;
  }
}
