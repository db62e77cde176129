/**
 * The issuance of recurring invoices: every RECURRING_SWEEP_SECONDS each server process issues the
 * dates that have come, one invoice per date and schedule, and a test clock's advance issues those
 * of one test mode (`runDue`, the TimeDrivenWork of server/db/clocks.ts).
 *
 * - Due: an active schedule whose `next_issue_date` is on or before its clock's UTC date. Schedules
 *   on the real time (live mode, and test modes without a stored clock) are judged against the real
 *   date; those of a test mode whose clock is frozen against that frozen date, read from
 *   `business_clocks` in the same query (every process shares the table), as the overdue sweep does.
 * - One date at a time: each date is issued by its own transaction, dated at its 00:00 UTC
 *   (RecurringInvoiceService.issue), and moves the schedule to its next date, so a schedule that
 *   missed several dates (downtime, a test clock's jump) catches up one invoice per date, in date
 *   order across schedules: the candidates are read by (next_issue_date, id) from a cursor, and a
 *   schedule whose next date now comes before the rest of the batch is read again first.
 * - Several processes: each date is claimed under the schedule's row lock, while the schedule is
 *   active with that date next; a date another process has issued is passed. A date that fails (its
 *   e-invoice not ready, the database gone) is logged and passed; the next sweep tries it again.
 */
import { Knex } from 'knex';
import { Logger } from 'pino';
import { acrossTenants, systemActor } from '../auth/actor';
import { Clock, nextUtcMidnight, systemClock, utcDate, utcMidnight } from '../clock';
import { FROZEN_DATE_SQL, Tenancy, TimeDrivenWork } from '../db/clocks';
import { Database } from '../db/database';
import { CronSweep } from '../jobs/cron-sweep';
import { RecurringInvoice } from './model';
import { RecurringInvoiceService } from './service';

const ACCESS = acrossTenants('recurring invoice sweep');

/** A schedule found due, at its next date. */
interface Candidate {
  id: number;
  business_id: number;
  livemode: number | boolean;
  next_issue_date: string;
}

/** Where a drain has got to: (next_issue_date, id) of the last candidate it worked. */
type Cursor = { date: string; id: number } | null;

type Finder = (cursor: Cursor) => Promise<Candidate[]>;

export class RecurringInvoiceSweep extends CronSweep implements TimeDrivenWork {

  constructor(
    private readonly db: Database,
    private readonly recurring: RecurringInvoiceService,
    logger: Logger,
    private readonly options: { batch?: number; clock?: Clock } = {},
  ) {
    super(logger, 'recurring invoice sweep');
  }

  private get clock(): Clock {
    return this.options.clock ?? systemClock;
  }

  private get batch(): number {
    return this.options.batch ?? 100;
  }

  /** Issues every date that has come, of every business; one sweep at a time per process. Resolves with how many invoices it issued. */
  protected async sweepOnce(): Promise<number> {
    const today = utcDate(this.clock.now());
    return (await this.drain((cursor) => this.onRealTime(cursor, today), 'pass', today)) + (await this.drain((cursor) => this.onFrozenClocks(cursor), 'pass'));
  }

  /**
   * Issues every date of this business and mode's active schedules on or before `at`'s UTC date, each
   * dated on its own date. A date that fails is thrown, as the overdue work throws (the advance
   * answers it and keeps its clock at the last moment it finished), not passed as the sweep passes it.
   */
  async runDue(tenancy: Tenancy, at: Date): Promise<void> {
    const until = utcDate(at);
    await this.drain((cursor) => this.ofTenancy(cursor, tenancy, until), 'throw', until);
  }

  /** The 00:00 UTC of this business and mode's next issue date (what lets a test clock's advance skip the days between). */
  async nextDueAfter(tenancy: Tenancy, after: Date): Promise<Date | null> {
    const row = (await RecurringInvoice.of(systemActor('recurring invoices', tenancy), this.db.current)
      .where('recurring_invoices.status', 'active')
      .min('recurring_invoices.next_issue_date as next')
      .first()) as unknown as { next: string | null } | undefined;
    if (!row?.next) return null;
    const due = utcMidnight(String(row.next).slice(0, 10));
    return due > after ? due : nextUtcMidnight(after);
  }

  /**
   * Issues the candidates `find` gives from a cursor, in (next_issue_date, id) order, until none is
   * left. A schedule just moved to a date before the next candidate's is read again before it, so
   * dates are issued in order across schedules. A sweep passes a date that failed (the next sweep
   * retries it); an advance throws. `until`, the date every candidate is judged by (unknown when each
   * has its own frozen clock), spares the last read: once a short batch is worked and no schedule
   * moved to a date still due by it, none is left.
   */
  private async drain(find: Finder, onError: 'pass' | 'throw', until?: string): Promise<number> {
    let issued = 0;
    let cursor: Cursor = null;
    while (!this.stopped) {
      const batch = await find(cursor);
      if (!batch.length) break;
      let dueAgain = false;
      for (const [index, candidate] of batch.entries()) {
        if (this.stopped) break;
        cursor = { date: candidate.next_issue_date, id: candidate.id };
        let next: string | null | undefined;
        try {
          next = await this.recurring.issue({ businessId: candidate.business_id, livemode: Boolean(candidate.livemode) }, candidate.id, candidate.next_issue_date);
          if (next !== undefined) issued++;
        } catch (err) {
          if (onError === 'throw') throw err;
          this.logger.error({ err, recurringInvoiceId: candidate.id, date: candidate.next_issue_date }, 'recurring invoice not issued; the next sweep retries');
        }
        if (next && (until === undefined || next <= until)) dueAgain = true;
        const following = batch[index + 1];
        if (next && following && (next < following.next_issue_date || (next === following.next_issue_date && candidate.id < following.id))) break;
      }
      // The last batch, and no schedule moved to a date still due by `until`: nothing is left to read.
      if (batch.length < this.batch && !dueAgain) break;
    }
    return issued;
  }

  /** Active schedules after the cursor, in (next_issue_date, id) order. */
  private due(cursor: Cursor): Knex.QueryBuilder<Candidate, Candidate[]> {
    const query = RecurringInvoice.acrossTenants(ACCESS, this.db.current)
      .select('recurring_invoices.id', 'recurring_invoices.business_id', 'recurring_invoices.livemode', 'recurring_invoices.next_issue_date')
      .where('recurring_invoices.status', 'active')
      .orderBy([
        { column: 'recurring_invoices.next_issue_date', order: 'asc' },
        { column: 'recurring_invoices.id', order: 'asc' },
      ])
      .limit(this.batch);
    if (cursor) {
      void query.where((after) => {
        void after
          .where('recurring_invoices.next_issue_date', '>', cursor.date)
          .orWhere((same) => {
            void same.where('recurring_invoices.next_issue_date', cursor.date).where('recurring_invoices.id', '>', cursor.id);
          });
      });
    }
    return query as unknown as Knex.QueryBuilder<Candidate, Candidate[]>;
  }

  /** One business and mode's schedules due by `until`, whatever its clock says (a test clock's advance names the time). */
  private async ofTenancy(cursor: Cursor, tenancy: Tenancy, until: string): Promise<Candidate[]> {
    return this.due(cursor)
      .where('recurring_invoices.business_id', tenancy.businessId)
      .where('recurring_invoices.livemode', tenancy.livemode)
      .where('recurring_invoices.next_issue_date', '<=', until);
  }

  /** Schedules on the real time: live mode, and test modes without a stored clock. */
  private async onRealTime(cursor: Cursor, today: string): Promise<Candidate[]> {
    return this.due(cursor)
      .where('recurring_invoices.next_issue_date', '<=', today)
      .whereRaw('not exists (select 1 from business_clocks where business_clocks.business_id = recurring_invoices.business_id and recurring_invoices.livemode = 0)');
  }

  /** Test-mode schedules of the businesses whose test clock is frozen, each judged by its frozen date. */
  private async onFrozenClocks(cursor: Cursor): Promise<Candidate[]> {
    return this.due(cursor)
      .join('business_clocks', 'business_clocks.business_id', 'recurring_invoices.business_id')
      .where('recurring_invoices.livemode', 0)
      .whereRaw(`recurring_invoices.next_issue_date <= ${FROZEN_DATE_SQL}`);
  }
}
