/**
 * The job engine: every claimed-and-retried piece of work (queued e-mails, refund reconciliation,
 * and the sweeps to come) is a `JobKind` run by a `JobQueue`, which claims due rows under a lease,
 * begins and counts their attempts (`lease.ts`), works them side by side, round after round until
 * nothing is due, and records each outcome under the lease that claimed the row. A kind only says
 * what one row's work is. node-cron sweeps every few seconds for retries and for anything a nudge
 * missed. The webhook worker keeps its own pool of slots but records through `outcomePatch` and
 * leases through `lease.ts` (see webhooks/worker.ts).
 */
import cron, { ScheduledTask } from 'node-cron';
import { Logger } from 'pino';
import { CrossTenantAccess } from '../auth/actor';
import { Clock } from '../clock';
import { Database } from '../db/database';
import { TenantModel } from '../db/tenant-model';
import { everySeconds } from './cron-sweep';
import { beginAttempt, claimDue, handBack, LeasedRow, LeaseOptions } from './lease';

/**
 * What one attempt came to: `done` (the row gets its done status and `fields`), `failed` (it gets
 * `fields`, such as the error, and is due again by the schedule, or fails when no attempt is left),
 * or `not-attempted`: the work was not made, and the row is handed back with its attempt uncounted.
 */
export type Outcome = { done: Record<string, unknown> } | { failed: Record<string, unknown> } | 'not-attempted';

export interface JobKind<M extends LeasedRow, P = undefined> {
  /** Names the kind in the log. */
  label: string;
  model: new () => M;
  access: CrossTenantAccess;
  /** Rows claimed, and worked side by side, at once. */
  batch: number;
  leaseSeconds: number;
  clock: Clock;
  /** Integer columns counted with each attempt besides `attempts`. */
  counters?: readonly string[];
  /** When the next attempt is due after `attemptsMade` (a failed one just made), or null: the row has failed. */
  schedule(attemptsMade: number, now: Date): Date | null;
  /** The statuses a row ends in. */
  statuses: { done: string; failed: string };
  /**
   * Work that may be repeated, made before the attempt begins (an e-mail's PDF): the attempt is
   * counted only after it, and not at all if the lease passed to another claim meanwhile. Without
   * it, the attempt begins with the claim. It returns what went wrong rather than throw: a throw
   * leaves the row leased and uncounted, so a row that always threw would never run out of retries.
   */
  prepare?(row: M): Promise<P>;
  /** One row's attempt. A throw leaves the row leased: it comes due again after its lease. */
  work(row: M, prepared: P): Promise<Outcome>;
}

/** The columns an outcome writes on a row claimed by `kind` (under its lease, `status = 'pending'`). */
export function outcomePatch<M extends LeasedRow>(
  kind: Pick<JobKind<M, unknown>, 'schedule' | 'statuses'>,
  row: Pick<LeasedRow, 'attempts'>,
  outcome: Exclude<Outcome, 'not-attempted'>,
  now: Date,
): Record<string, unknown> {
  if ('done' in outcome) return { ...outcome.done, lease_id: null, status: kind.statuses.done };
  const retryAt = kind.schedule(row.attempts, now);
  return { ...outcome.failed, lease_id: null, ...(retryAt ? { next_attempt_at: retryAt.toISOString() } : { status: kind.statuses.failed }) };
}

export class JobQueue<M extends LeasedRow, P = undefined> {
  private sweeping: Promise<number> | null = null;
  private again = false;
  private task?: ScheduledTask;
  private stopped = false;
  /** Rows run by id (`runNow`) still under way: stopping waits for them. */
  private readonly running = new Set<Promise<Outcome | null>>();

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
    private readonly kind: JobKind<M, P>,
  ) {}

  /** Sweeps every `seconds` (node-cron: a divisor of 60 below a minute, whole minutes above). */
  start(seconds: number): void {
    this.task = cron.schedule(everySeconds(seconds), () => void this.sweep());
  }

  /** Work has become due (a commit, a replay): sweep now, or again right after the running sweep. */
  nudge(): void {
    if (!this.stopped) void this.sweep();
  }

  /** Works everything due, round after round; one sweep at a time per queue. Resolves with how many rows were worked. */
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
          worked += await this.drain();
        } while (this.again && !this.stopped);
      } catch (err) {
        this.logger.error({ err }, `${this.kind.label} sweep failed; the next sweep retries`);
      } finally {
        this.sweeping = null;
      }
      return worked;
    })();
    return this.sweeping;
  }

  /** Claims and works due rows until none is due; several drains share the rows as several processes do. */
  async drain(): Promise<number> {
    let worked = 0;
    for (;;) {
      const claimed = this.stopped ? [] : await this.claim({ limit: this.kind.batch });
      if (!claimed.length) return worked;
      await Promise.all(claimed.map((row) => this.run(row)));
      worked += claimed.length;
    }
  }

  /** Claims and works one row now if it is due and unclaimed (a first attempt right after its commit); null when not claimed. */
  runNow(id: number): Promise<Outcome | null> {
    const run = (async () => {
      const [claimed] = await this.claim({ limit: 1, id });
      return claimed ? this.run(claimed) : null;
    })();
    this.running.add(run);
    void run.finally(() => this.running.delete(run)).catch(() => undefined);
    return run;
  }

  /** Stops sweeping and waits for the work under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.task?.stop();
    await this.sweeping;
    await Promise.allSettled(this.running);
  }

  private leaseOptions(): LeaseOptions {
    return { access: this.kind.access, leaseSeconds: this.kind.leaseSeconds, clock: this.kind.clock, counters: this.kind.counters };
  }

  private claim(only: { limit: number; id?: number }): Promise<M[]> {
    return claimDue(this.db, this.kind.model, { ...this.leaseOptions(), ...only, begin: !this.kind.prepare });
  }

  /** Prepares, begins and works one claimed row, and records its outcome; null when the work threw (nothing recorded). */
  private async run(row: M): Promise<Outcome | null> {
    let outcome: Outcome;
    try {
      // Without a preparation, P is undefined (the kind's default) and the claim began the attempt.
      let prepared = undefined as P;
      if (this.kind.prepare) {
        prepared = await this.kind.prepare(row);
        // The preparation may have waited past the lease: the claim that took the row over makes the attempt.
        if (!(await beginAttempt(this.db, this.kind.model, row, this.leaseOptions()))) {
          this.logger.info({ id: row.id }, `${this.kind.label} left to a later claim: its lease ran out before its attempt began`);
          return 'not-attempted';
        }
      }
      outcome = await this.kind.work(row, prepared);
    } catch (err) {
      this.logger.error({ err, id: row.id }, `${this.kind.label} failed; it is retried after its lease`);
      return null;
    }
    try {
      await this.record(row, outcome);
    } catch (err) {
      this.logger.error({ err, id: row.id }, `recording a ${this.kind.label} failed; it is retried after its lease`);
    }
    return outcome;
  }

  private async record(row: M, outcome: Outcome): Promise<void> {
    if (outcome === 'not-attempted') return handBack(this.db, this.kind.model, [row], { ...this.leaseOptions(), begun: true });
    await (this.kind.model as unknown as typeof TenantModel)
      .acrossTenants(this.kind.access, this.db.current)
      .where({ id: row.id, lease_id: row.lease_id, status: 'pending' })
      .patch(outcomePatch(this.kind, row, outcome, this.kind.clock.now()) as never);
  }
}
