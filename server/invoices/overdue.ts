/**
 * Overdue invoices: `invoice.overdue` once per invoice, dated at the moment it became overdue (00:00
 * UTC after its due date, or its sending if later), recorded by the first sweep after that moment by the clock of its
 * business and mode, or by a test clock's advance passing it.
 *
 * - An invoice is due for the event when the overdue rule holds (server/invoices/status.ts, written
 *   once as SQL and in memory) and `overdue_notified_at` is null. The `invoices_overdue_sweep` index
 *   (status, overdue_notified_at, due_date) finds those of every business in one query per batch;
 *   `invoices_by_due_date` (business_id, livemode, due_date) those of one business and mode.
 * - Each is marked and its event recorded in one transaction, under the invoice's row lock (a
 *   payment, void or credit note takes it too, so it lands wholly before or after): the rule is
 *   checked on the locked row, the mark is conditional (`… and overdue_notified_at is null`), and
 *   only the transaction whose mark changed the row records the event. Two sweeps or advances, in
 *   one process or several, may pick the same invoice; one of them marks it, the others move on.
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
 *   calls `runDue` for its business's test mode at each midnight it passes.
 * - Existing data: the migration marks invoices whose due date had passed before the upgrade as
 *   notified, so they are overdue and fire nothing.
 */
import { Knex } from 'knex';
import pLimit from 'p-limit';
import { Logger } from 'pino';
import { acrossTenants, systemActor } from '../auth/actor';
import { Clock, frozenClock, nextUtcMidnight, systemClock, utcDate, utcMidnight, withBusinessClock } from '../clock';
import { Database } from '../db/database';
import { CronSweep } from '../jobs/cron-sweep';
import { FROZEN_DATE_SQL, Tenancy, TimeDrivenWork } from '../db/clocks';
import { selectRows, writeRows } from '../db/statement';
import { fromDbTime, toDbTime } from '../db/time';
import { Outbox } from '../events/outbox';
import { invoiceDetail } from './detail';
import { InvoiceLinks } from './links';
import { Invoice } from './model';
import { isOverdue, overdueSince, overdueSql, OWING_SQL } from './status';
import { SWEEP_CONCURRENCY } from './sweeps';

const ACCESS = acrossTenants('overdue sweep');

/** One invoice found due for `invoice.overdue`, with the frozen time of its test mode if it has one. */
interface Candidate {
  id: number;
  business_id: number;
  livemode: number | boolean;
  frozen_time?: string | Date | null;
}

/** The earliest due date of the invoices of a business and mode that will fire `invoice.overdue` once it has ended. */
const NEXT_DUE = `select min(invoices.due_date) as due_date from invoices where business_id = ? and livemode = ? and overdue_notified_at is null and ${OWING_SQL}`;

/** The mark: only while the invoice is still unmarked (the rule was checked on the locked row). */
const MARK = 'update invoices set overdue_notified_at = ? where id = ? and business_id = ? and livemode = ? and overdue_notified_at is null';

export class OverdueSweep extends CronSweep implements TimeDrivenWork {

  constructor(
    private readonly db: Database,
    private readonly outbox: Outbox,
    private readonly links: InvoiceLinks,
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
    return (await this.drain((after) => this.onRealTime(after), 'pass')) + (await this.drain((after) => this.onFrozenClocks(after), 'pass'));
  }

  /**
   * A test clock's step: fires `invoice.overdue` for the invoices of one business and mode overdue
   * by `at`'s UTC date, each dated at the moment it became overdue. A failure is thrown (the advance
   * answers it, and running it again finishes what is left), not passed as the sweep passes it.
   */
  async runDue(tenancy: Tenancy, at: Date): Promise<void> {
    const actor = systemActor('overdue sweep', tenancy);
    const today = utcDate(at);
    await this.drain(async (after) => {
      return this.unmarked(Invoice.of(actor, this.db.current), after).whereRaw(overdueSql('?'), [today]);
    }, 'throw', frozenClock(at));
  }

  /** When the next invoice of a business and mode becomes overdue (what lets a test clock's advance skip the days in between). */
  async nextDueAfter(tenancy: Tenancy, after: Date): Promise<Date | null> {
    const [row] = await selectRows<{ due_date: string | null }>(this.db.current, NEXT_DUE, [tenancy.businessId, tenancy.livemode ? 1 : 0]);
    if (!row?.due_date) return null;
    const dueEnded = nextUtcMidnight(utcMidnight(row.due_date.slice(0, 10)));
    return dueEnded > after ? dueEnded : nextUtcMidnight(after);
  }

  /**
   * Fires `invoice.overdue` for one invoice if it is overdue by `clock`'s date (its business's clock)
   * and has not fired yet; false otherwise. Its mark, its event and the invoice the event shows are
   * dated at the moment it became overdue. The sweep's step, the advance's, and the CLI's
   * `trigger invoice.overdue`.
   */
  async notify(tenancy: Tenancy, invoiceId: number, clock: Clock): Promise<boolean> {
    const today = utcDate(clock.now());
    const actor = systemActor('overdue sweep', tenancy);
    return this.db.transaction(async (trx) => {
      const row = await Invoice.findOwn(actor, trx, invoiceId, { lock: 'update' });
      if (!row || row.overdue_notified_at !== null || !isOverdue(row, today)) return false;
      const since = overdueSince(row);
      const { affectedRows } = await writeRows(trx, MARK, [toDbTime(since), invoiceId, tenancy.businessId, tenancy.livemode ? 1 : 0]);
      if (affectedRows !== 1) return false;
      return withBusinessClock(frozenClock(since), async () => {
        const invoice = await invoiceDetail(actor, row, trx, this.links);
        await this.outbox.record(trx, actor, 'invoice.overdue', { invoice });
        return true;
      });
    });
  }

  /**
   * Works batches of candidates in id order until none is left, each judged by its frozen test clock,
   * else by `clock` (the real time). A sweep passes an invoice that failed (the next sweep retries
   * it); an advance throws.
   */
  private async drain(find: (after: number) => Promise<Candidate[]>, onError: 'pass' | 'throw', clock: Clock = this.clock): Promise<number> {
    let fired = 0;
    let after = 0;
    while (!this.stopped) {
      const batch = await find(after);
      if (!batch.length) break;
      if (onError === 'throw') {
        // An advance: one at a time, in id order, and the first failure stops it.
        for (const candidate of batch) if (!this.stopped && (await this.notifyCandidate(candidate, clock))) fired++;
      } else {
        // A sweep: several at once; one that fails is passed, and the next sweep retries it.
        const limit = pLimit(SWEEP_CONCURRENCY);
        await Promise.all(
          batch.map((candidate) =>
            limit(async () => {
              if (this.stopped) return;
              try {
                if (await this.notifyCandidate(candidate, clock)) fired++;
              } catch (err) {
                this.logger.error({ err, invoiceId: candidate.id }, 'invoice.overdue not recorded; the next sweep retries');
              }
            }),
          ),
        );
      }
      after = batch[batch.length - 1].id;
      if (batch.length < this.batch) break;
    }
    return fired;
  }

  /** `notify` for a candidate, by its own frozen clock when its test mode has one, else by `clock`. */
  private notifyCandidate(candidate: Candidate, clock: Clock): Promise<boolean> {
    const frozen = fromDbTime(candidate.frozen_time);
    return this.notify({ businessId: candidate.business_id, livemode: Boolean(candidate.livemode) }, candidate.id, frozen ? frozenClock(new Date(frozen)) : clock);
  }

  /** The invoices of `query` not yet notified, after the id `after`, in id order, a batch at a time. */
  private unmarked(query: ReturnType<typeof Invoice.of>, after: number): Knex.QueryBuilder<Candidate, Candidate[]> {
    return query
      .select('invoices.id', 'invoices.business_id', 'invoices.livemode')
      .whereNull('invoices.overdue_notified_at')
      .where('invoices.id', '>', after)
      .orderBy('invoices.id')
      .limit(this.batch) as unknown as Knex.QueryBuilder<Candidate, Candidate[]>;
  }

  /** Invoices on the real time: live mode, and test modes without a stored clock. */
  private async onRealTime(after: number): Promise<Candidate[]> {
    return this.unmarked(Invoice.acrossTenants(ACCESS, this.db.current), after)
      .whereRaw(overdueSql('?'), [utcDate(this.clock.now())])
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
