/**
 * Payment reminders: for each of its business's reminder offsets (`business update --reminders
 * -3,1,7`, days from the due date), an invoice awaiting payment is reminded once, on due_date +
 * offset, by the clock of its business and mode.
 *
 * - A reminder is due at 00:00 UTC of its day (due_date + offset) while the invoice awaits payment
 *   (a payable status and an amount due: `awaitsPayment`, the overdue rule's half), and only if that
 *   day is neither before the invoice's issue date, nor before it was sent (issued: an invoice dated
 *   earlier and sent late is not reminded of days already past), nor before the offsets were set in
 *   its mode (`reminders_set_at_live`/`_test`): setting offsets, or upgrading, does not remind of
 *   days already past.
 * - Fifty to a transaction (collection-steps.ts): the invoices' rows locked (as a payment locks
 *   them, so a payment committed first leaves nothing to remind of), and for each reminder not sent
 *   yet for its (invoice_id, offset_days), its `invoice_reminders` row, the event
 *   `invoice.reminder_sent` and, in live mode, the e-mail to the client (queued, it leaves after the
 *   commit). Test mode writes no e-mail. Sweeps in several processes may pick the same reminder; one
 *   sends it, the others find it sent.
 * - Dated on its day: `sent_at` is 00:00 UTC of the reminder's day, and the event's invoice is
 *   shown under a clock frozen then, even when the sweep runs later (downtime, a test clock moved
 *   on), as `invoice.overdue` is.
 * - Time, as the overdue sweep judges it: live mode and test modes without a stored clock by the
 *   real time, one query per offset in use and mode through `invoices_reminder_sweep` (status,
 *   livemode, due_date); a test mode whose clock is frozen (`business_clocks`) by its frozen time,
 *   read from the table; a test clock's advance takes `dueBy` of its test mode, in time order with
 *   `invoice.overdue` (FollowUpWork).
 */
import { Knex } from 'knex';
import { Logger } from 'pino';
import { acrossTenants } from '../auth/actor';
import { reminderOffsetsOf } from '../businesses/model';
import { Clock, systemClock, utcDate } from '../clock';
import { Tenancy } from '../db/clocks';
import { Database } from '../db/database';
import { selectRows } from '../db/statement';
import { fromDbTime } from '../db/time';
import { CronSweep } from '../jobs/cron-sweep';
import { addDays } from '../validation';
import { CollectionStep, CollectionSteps, DueStep, inTimeOrder, reminderMoment } from './collection-steps';
import { Invoice, whereAwaitsPayment } from './model';

const ACCESS = acrossTenants('reminder sweep');

/** An invoice found due for the reminder of one offset. */
interface Candidate {
  id: number;
  business_id: number;
  livemode: number | boolean;
  due_date: string;
}

const OFFSETS_IN_USE = 'select distinct reminder_offsets from businesses where reminder_offsets is not null';
const OFFSETS_OF_BUSINESS = 'select reminder_offsets from businesses where id = ?';
/** Test modes whose clock is frozen, of businesses that remind. */
const FROZEN_TEST_MODES = `select business_clocks.business_id, business_clocks.frozen_time from business_clocks
  join businesses on businesses.id = business_clocks.business_id
 where business_clocks.livemode = 0 and businesses.reminder_offsets is not null order by business_clocks.business_id`;

export class ReminderSweep extends CronSweep {
  /** SQL of (due_date + ? days) as `YYYY-MM-DD`, and how the offset is bound to it. */
  private readonly reminderDay: { sql: string; bind: (offset: number) => Knex.Value };
  /** SQL matching a business whose `reminder_offsets` lists the offset bound by `listedPattern`. */
  private readonly offsetListed: string;

  constructor(
    private readonly db: Database,
    private readonly steps: CollectionSteps,
    logger: Logger,
    private readonly options: { batch?: number; clock?: Clock } = {},
  ) {
    super(logger, 'reminder sweep');
    const mysql = db.dialect === 'mysql';
    this.reminderDay = mysql
      ? { sql: 'date_add(invoices.due_date, interval ? day)', bind: (offset) => offset }
      : { sql: 'date(invoices.due_date, ?)', bind: (offset) => `${offset >= 0 ? '+' : ''}${offset} days` };
    this.offsetListed = mysql ? "concat(',', businesses.reminder_offsets, ',') like ?" : "(',' || businesses.reminder_offsets || ',') like ?";
  }

  private get clock(): Clock {
    return this.options.clock ?? systemClock;
  }

  private get batch(): number {
    return this.options.batch ?? 200;
  }

  /** Sends every reminder that is due, by each business and mode's clock; one sweep at a time per process. Resolves with how many it sent. */
  protected async sweepOnce(): Promise<number> {
    return (await this.onRealTime()) + (await this.onFrozenClocks());
  }

  /**
   * The reminders of this business and mode's invoices after the id `after` due at or before `at`,
   * each with the moment it is dated at (00:00 UTC of its day), in time order: what a test clock's
   * advance sends.
   */
  async dueBy(tenancy: Tenancy, at: Date, after = 0): Promise<DueStep[]> {
    const [business] = await selectRows<{ reminder_offsets: string | null }>(this.db.current, OFFSETS_OF_BUSINESS, [tenancy.businessId]);
    const today = utcDate(at);
    // The offsets side by side (each on a connection of its own on MySQL): an advance asks this at every stop.
    const byOffset = await Promise.all(
      reminderOffsetsOf(business?.reminder_offsets ?? null).map(async (offsetDays) => {
        const due: DueStep[] = [];
        for (let from = after; ; ) {
          const batch = await this.candidates(offsetDays, addDays(today, -offsetDays), { ...tenancy, realTime: false }, from);
          for (const candidate of batch) due.push({ at: reminderMoment(candidate.due_date, offsetDays), step: { kind: 'reminder', tenancy, invoiceId: candidate.id, offsetDays } });
          if (batch.length < this.batch) return due;
          from = batch[batch.length - 1].id;
        }
      }),
    );
    return byOffset.flat().sort(inTimeOrder);
  }

  /**
   * Sends the reminder of `offsetDays` for an invoice, dated 00:00 UTC of due_date + offsetDays,
   * unless it was sent already or the invoice no longer awaits payment; false then. The CLI's
   * `trigger invoice.reminder_sent`, which makes it due.
   */
  async remind(tenancy: Tenancy, invoiceId: number, offsetDays: number): Promise<boolean> {
    return (await this.steps.work([{ kind: 'reminder', tenancy, invoiceId, offsetDays }])) === 1;
  }

  /** Live mode and test modes without a stored clock: each offset in use, judged against the real UTC date. */
  private async onRealTime(): Promise<number> {
    const today = utcDate(this.clock.now());
    const offsets = await this.offsetsInUse();
    let sent = 0;
    for (const livemode of [true, false]) {
      for (const offsetDays of offsets) {
        let after = 0;
        while (!this.stopped) {
          const batch = await this.candidates(offsetDays, addDays(today, -offsetDays), { livemode, realTime: true }, after);
          const steps: CollectionStep[] = batch.map((candidate) => ({ kind: 'reminder', tenancy: { businessId: candidate.business_id, livemode }, invoiceId: candidate.id, offsetDays }));
          sent += await this.work(steps);
          if (batch.length < this.batch) break;
          after = batch[batch.length - 1].id;
        }
      }
    }
    return sent;
  }

  /**
   * Test modes whose clock is frozen, each by its frozen time read from the table every process
   * shares (not the per-process cache), in day order, as an advance sends them.
   */
  private async onFrozenClocks(): Promise<number> {
    let sent = 0;
    for (const frozen of await selectRows<{ business_id: number; frozen_time: string | Date }>(this.db.current, FROZEN_TEST_MODES, [])) {
      if (this.stopped) break;
      const due = await this.dueBy({ businessId: frozen.business_id, livemode: false }, new Date(fromDbTime(frozen.frozen_time)!));
      sent += await this.work(due.map(({ step }) => step));
    }
    return sent;
  }

  /** The steps worked, a failure logged and passed over: the next sweep retries it. */
  private work(steps: readonly CollectionStep[]): Promise<number> {
    return this.steps.work(steps, (err, step) => this.logger.error({ err, invoiceId: step.invoiceId, offsetDays: step.kind === 'reminder' ? step.offsetDays : undefined }, 'payment reminder not recorded; the next sweep retries'));
  }

  /** The offsets some business reminds on. */
  private async offsetsInUse(): Promise<number[]> {
    const rows = await selectRows<{ reminder_offsets: string }>(this.db.current, OFFSETS_IN_USE, []);
    return [...new Set(rows.flatMap((row) => reminderOffsetsOf(row.reminder_offsets)))].sort((a, b) => a - b);
  }

  /**
   * Invoices due for the reminder of `offsetDays`, in id order after `after`: awaiting payment, due on
   * or before `lastDueDate` (the clock's date less the offset), of a business that lists the offset,
   * the reminder's day neither before the issue date, nor the day it was sent, nor before the offsets
   * were set in the mode, and
   * not reminded yet. `realTime`: leave out the test modes whose clock is frozen (judged apart).
   */
  private candidates(
    offsetDays: number,
    lastDueDate: string,
    scope: { livemode: boolean; businessId?: number; realTime: boolean },
    after: number,
  ): Knex.QueryBuilder<Candidate, Candidate[]> {
    const setAt = scope.livemode ? 'businesses.reminders_set_at_live' : 'businesses.reminders_set_at_test';
    const day = this.reminderDay;
    const query = whereAwaitsPayment(Invoice.acrossTenants(ACCESS, this.db.current))
      .join('businesses', 'businesses.id', 'invoices.business_id')
      .select('invoices.id', 'invoices.business_id', 'invoices.livemode', 'invoices.due_date')
      .where('invoices.livemode', scope.livemode ? 1 : 0)
      .where('invoices.due_date', '<=', lastDueDate)
      .whereRaw(this.offsetListed, [`%,${offsetDays},%`])
      .whereRaw(`${day.sql} >= invoices.issue_date`, [day.bind(offsetDays)])
      // Issued when it was sent, whatever date it bears: a day already past then is not reminded of.
      .whereRaw(`${day.sql} >= coalesce(substr(invoices.sent_at, 1, 10), invoices.issue_date)`, [day.bind(offsetDays)])
      .whereRaw(`${day.sql} >= substr(${setAt}, 1, 10)`, [day.bind(offsetDays)])
      // Not reminded yet, as an anti-join on the (invoice_id, offset_days) key: MariaDB ran `not exists` by reading every reminder of every invoice.
      .leftJoin('invoice_reminders as sent', (on) => {
        void on.on('sent.invoice_id', 'invoices.id').andOnVal('sent.offset_days', '=', offsetDays);
      })
      .whereNull('sent.id')
      .where('invoices.id', '>', after)
      .orderBy('invoices.id')
      .limit(this.batch);
    if (scope.businessId !== undefined) void query.where('invoices.business_id', scope.businessId);
    if (scope.realTime && !scope.livemode) void query.whereRaw('not exists (select 1 from business_clocks where business_clocks.business_id = invoices.business_id)');
    return query as unknown as Knex.QueryBuilder<Candidate, Candidate[]>;
  }
}
