/**
 * Overdue invoices: `invoice.overdue` once per invoice, dated at the moment it became overdue (00:00
 * UTC after its due date, or its sending if later), recorded by the first sweep after that moment by the clock of its
 * business and mode, or by a test clock's advance passing it.
 *
 * - An invoice is due for the event when the overdue rule holds (server/invoices/status.ts, written
 *   once as SQL and in memory) and `overdue_notified_at` is null. The `invoices_overdue_sweep` index
 *   (status, overdue_notified_at, due_date) finds those of every business in one query per batch;
 *   `invoices_by_due_date` (business_id, livemode, due_date) those of one business and mode.
 * - They are marked and their events recorded fifty to a transaction (collection-steps.ts), under
 *   the invoices' row locks (a payment, void or credit note takes them too, so it lands wholly
 *   before or after): the rule is checked on the locked row and the mark is conditional (`… and
 *   overdue_notified_at is null`). Two sweeps or advances, in one process or several, may pick the
 *   same invoice; one of them marks it, the others find it marked and move on.
 * - Dated at the moment it was due (contract: "when time jumps, each invoice.overdue still happens
 *   once, dated on the day it was due"): `overdue_notified_at`, the event's `created_at` and the
 *   invoice it shows are all taken at 00:00 UTC of the day after the due date (or when the invoice
 *   was sent, if that was later: it was overdue from then), whether the sweep ran a minute after
 *   it, after a day of downtime, or a test clock jumped a month.
 * - Which "today" judges an invoice: invoices on the real time (live mode, and test modes without
 *   a stored clock) are judged against the real UTC date, one range on the index. A test mode whose
 *   clock is frozen (`business_clocks`) is judged against its own frozen date, read from the same
 *   query (a join on `business_clocks`, a small table: test modes whose clock was set), not from the
 *   per-process cache of server/db/clocks.ts: the sweep reads the stored clock, which every process
 *   shares. The two queries split the invoices between them (the first leaves out the frozen test
 *   modes), so each invoice is judged by one clock. A test clock's advance (server/test-clock/)
 *   takes `dueBy` of its business's test mode, in time order with the reminders (FollowUpWork).
 * - Existing data: the migration marks invoices whose due date had passed before the upgrade as
 *   notified, so they are overdue and fire nothing.
 */
import { Knex } from 'knex';
import { Logger } from 'pino';
import { acrossTenants, systemActor } from '../auth/actor';
import { Clock, systemClock, utcDate } from '../clock';
import { FROZEN_DATE_SQL, Tenancy } from '../db/clocks';
import { Database } from '../db/database';
import { fromDbTime } from '../db/time';
import { CronSweep } from '../jobs/cron-sweep';
import { CollectionStep, CollectionSteps, DueStep } from './collection-steps';
import { Invoice } from './model';
import { overdueSince, overdueSql } from './status';

const ACCESS = acrossTenants('overdue sweep');

/** One invoice found due for `invoice.overdue`, with the frozen time of its test mode if it has one. */
interface Candidate {
  id: number;
  business_id: number;
  livemode: number | boolean;
  due_date: string;
  sent_at: string | Date | null;
  frozen_time?: string | Date | null;
}

export class OverdueSweep extends CronSweep {
  constructor(
    private readonly db: Database,
    private readonly steps: CollectionSteps,
    logger: Logger,
    private readonly options: { batch?: number; clock?: Clock } = {},
  ) {
    super(logger, 'overdue sweep');
  }

  private get clock(): Clock {
    return this.options.clock ?? systemClock;
  }

  private get batch(): number {
    return this.options.batch ?? 200;
  }

  /** Fires `invoice.overdue` for every invoice due for it; one sweep at a time per process. Resolves with how many it fired. */
  protected async sweepOnce(): Promise<number> {
    const today = utcDate(this.clock.now());
    return (await this.drain((after) => this.onRealTime(after, today), today)) + (await this.drain((after) => this.onFrozenClocks(after)));
  }

  /**
   * The `invoice.overdue` steps of one business and mode's invoices after the id `after` overdue by
   * `at`'s UTC date, each with the moment it became overdue, and judged on that moment's date (a
   * test clock's advance works them in time order with the reminders, up to each of its stops).
   */
  async dueBy(tenancy: Tenancy, at: Date, after = 0): Promise<DueStep[]> {
    const found: DueStep[] = [];
    for (let from = after; ; ) {
      const batch = await this.unmarked(Invoice.of(systemActor('overdue sweep', tenancy), this.db.current), from).whereRaw(overdueSql('?'), [utcDate(at)]);
      for (const candidate of batch) {
        const since = overdueSince({ due_date: candidate.due_date, sent_at: fromDbTime(candidate.sent_at) });
        found.push({ at: since, step: { kind: 'overdue', tenancy, invoiceId: candidate.id, today: utcDate(since) } });
      }
      if (batch.length < this.batch) return found;
      from = batch[batch.length - 1].id;
    }
  }

  /**
   * Fires `invoice.overdue` for one invoice if it is overdue by `clock`'s date (its business's clock)
   * and has not fired yet; false otherwise. Its mark, its event and the invoice the event shows are
   * dated at the moment it became overdue. The CLI's `trigger invoice.overdue`.
   */
  async notify(tenancy: Tenancy, invoiceId: number, clock: Clock): Promise<boolean> {
    return (await this.steps.work([{ kind: 'overdue', tenancy, invoiceId, today: utcDate(clock.now()) }])) === 1;
  }

  /**
   * Works batches of candidates in id order until none is left, each judged by its frozen test
   * clock's date, else by `today`. An invoice that failed is passed (the next sweep retries it).
   */
  private async drain(find: (after: number) => Promise<Candidate[]>, today?: string): Promise<number> {
    let fired = 0;
    let after = 0;
    while (!this.stopped) {
      const batch = await find(after);
      if (!batch.length) break;
      const steps: CollectionStep[] = batch.map((candidate) => ({
        kind: 'overdue',
        tenancy: { businessId: candidate.business_id, livemode: Boolean(candidate.livemode) },
        invoiceId: candidate.id,
        today: today ?? utcDate(new Date(fromDbTime(candidate.frozen_time)!)),
      }));
      fired += await this.steps.work(steps, (err, step) => this.logger.error({ err, invoiceId: step.invoiceId }, 'invoice.overdue not recorded; the next sweep retries'));
      after = batch[batch.length - 1].id;
      if (batch.length < this.batch) break;
    }
    return fired;
  }

  /** The invoices of `query` not yet notified, after the id `after`, in id order, a batch at a time. */
  private unmarked(query: ReturnType<typeof Invoice.of>, after: number): Knex.QueryBuilder<Candidate, Candidate[]> {
    return query
      .select('invoices.id', 'invoices.business_id', 'invoices.livemode', 'invoices.due_date', 'invoices.sent_at')
      .whereNull('invoices.overdue_notified_at')
      .where('invoices.id', '>', after)
      .orderBy('invoices.id')
      .limit(this.batch) as unknown as Knex.QueryBuilder<Candidate, Candidate[]>;
  }

  /** Invoices on the real time: live mode, and test modes without a stored clock. */
  private async onRealTime(after: number, today: string): Promise<Candidate[]> {
    return this.unmarked(Invoice.acrossTenants(ACCESS, this.db.current), after)
      .whereRaw(overdueSql('?'), [today])
      .whereRaw('not exists (select 1 from business_clocks where business_clocks.business_id = invoices.business_id and invoices.livemode = 0)');
  }

  /** Test-mode invoices of the businesses whose test clock is frozen, each judged by its frozen date. */
  private async onFrozenClocks(after: number): Promise<Candidate[]> {
    return this.unmarked(Invoice.acrossTenants(ACCESS, this.db.current), after)
      .join('business_clocks', 'business_clocks.business_id', 'invoices.business_id')
      .select('business_clocks.frozen_time')
      .where('invoices.livemode', 0)
      .whereRaw(overdueSql(FROZEN_DATE_SQL));
  }
}
