/**
 * Overdue invoices: the sweep that fires `invoice.overdue` once per invoice, on the first sweep after
 * its due date has ended (UTC) by the clock of its business and mode.
 *
 * - An invoice is due for the event when it awaits payment (a payable status), something is still
 *   due, its due date is before its clock's UTC date, and `overdue_notified_at` is null. The
 *   `invoices_overdue_sweep` index (status, overdue_notified_at, due_date) finds those of every
 *   business in one query per batch.
 * - Each is marked and its event recorded in one transaction: the mark is a conditional update
 *   (`… where id = ? and overdue_notified_at is null` and the rule again), and only the transaction
 *   whose update changed the row records the event. Two sweeps, in one process or several, may pick
 *   the same invoice; one of them marks it, the other changes nothing and moves on. A payment,
 *   void or credit note committed before the mark makes the rule false, so nothing fires.
 * - Time: invoices on the real time (live mode, and test modes without a stored clock) are judged
 *   against the real UTC date, one range on the index. A test mode whose clock is frozen
 *   (`business_clocks`) is judged against its own frozen date, read from the same query (a join on
 *   `business_clocks`, a small table: test modes whose clock was set), not from the per-process cache
 *   of server/db/clocks.ts: the sweep reads the stored clock, which every process shares. The two
 *   queries split the invoices between them (the first leaves out the frozen test modes), so each
 *   invoice is judged by one clock. Each event's invoice shows `overdue` by that clock, and
 *   `overdue_notified_at` is that clock's time.
 * - Existing data: the migration marks invoices whose due date had passed before the upgrade as
 *   notified, so they are overdue and fire nothing.
 */
import cron, { ScheduledTask } from 'node-cron';
import { Knex } from 'knex';
import { Logger } from 'pino';
import { acrossTenants, systemActor } from '../auth/actor';
import { Clock, frozenClock, systemClock, withBusinessClock } from '../clock';
import { Database } from '../db/database';
import { Tenancy } from '../db/clocks';
import { writeRows } from '../db/statement';
import { fromDbTime, toDbTime } from '../db/time';
import { Outbox } from '../events/outbox';
import { invoiceDetail } from './detail';
import { InvoiceLinks } from './links';
import { Invoice, PAYABLE_STATUSES } from './model';
import { utcDate } from './view';

const ACCESS = acrossTenants('overdue sweep');

/** One invoice found due for `invoice.overdue`, with the frozen time of its test mode if it has one. */
interface Candidate {
  id: number;
  business_id: number;
  livemode: number | boolean;
  frozen_time?: string | Date | null;
}

const PAYABLE_LIST = PAYABLE_STATUSES.map(() => '?').join(', ');
/** The mark: only while the invoice is still unmarked and still overdue by `today`. */
const MARK = `update invoices set overdue_notified_at = ? where id = ? and business_id = ? and livemode = ? and overdue_notified_at is null and status in (${PAYABLE_LIST}) and total > amount_paid + amount_credited and due_date < ?`;

export class OverdueSweep {
  private task?: ScheduledTask;
  private sweeping: Promise<number> | null = null;
  private stopped = false;

  constructor(
    private readonly db: Database,
    private readonly outbox: Outbox,
    private readonly links: InvoiceLinks,
    private readonly logger: Logger,
    private readonly options: { batch?: number; clock?: Clock } = {},
  ) {}

  private get clock(): Clock {
    return this.options.clock ?? systemClock;
  }

  private get batch(): number {
    return this.options.batch ?? 200;
  }

  /** Sweeps every `seconds` (node-cron: a divisor of 60 below a minute, whole minutes above). */
  start(seconds: number): void {
    this.task = cron.schedule(seconds < 60 ? `*/${seconds} * * * * *` : `0 */${Math.round(seconds / 60)} * * * *`, () => void this.sweep());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.task?.stop();
    await this.sweeping;
  }

  /** Fires `invoice.overdue` for every invoice due for it; one sweep at a time per process. Resolves with how many it fired. */
  sweep(): Promise<number> {
    if (this.sweeping) return this.sweeping;
    this.sweeping = (async () => {
      try {
        return (await this.drain((after) => this.onRealTime(after))) + (await this.drain((after) => this.onFrozenClocks(after)));
      } catch (err) {
        this.logger.error({ err }, 'overdue sweep failed; the next sweep retries');
        return 0;
      } finally {
        this.sweeping = null;
      }
    })();
    return this.sweeping;
  }

  /**
   * Fires `invoice.overdue` for one invoice if it is due for it now (by its business's clock, given
   * as `clock`); false when it is not, or when it was already fired. The sweep's step, and the
   * CLI's `trigger invoice.overdue`.
   */
  async notify(tenancy: Tenancy, invoiceId: number, clock: Clock): Promise<boolean> {
    const now = clock.now();
    const actor = systemActor('overdue sweep', tenancy);
    return this.db.transaction(async (trx) => {
      const { affectedRows } = await writeRows(trx, MARK, [toDbTime(now), invoiceId, tenancy.businessId, tenancy.livemode ? 1 : 0, ...PAYABLE_STATUSES, utcDate(now)]);
      if (affectedRows !== 1) return false;
      const row = await Invoice.findOwn(actor, trx, invoiceId);
      if (!row) throw new Error(`invoice ${invoiceId} is not of business ${tenancy.businessId}`);
      const invoice = await withBusinessClock(clock, () => invoiceDetail(actor, row, trx, this.links));
      await this.outbox.record(trx, actor, 'invoice.overdue', { invoice });
      return true;
    });
  }

  /** Works batches of candidates in id order until none is left; an invoice that failed is passed (the next sweep retries it). */
  private async drain(find: (after: number) => Promise<Candidate[]>): Promise<number> {
    let fired = 0;
    let after = 0;
    while (!this.stopped) {
      const batch = await find(after);
      if (!batch.length) break;
      for (const candidate of batch) {
        if (this.stopped) break;
        const frozen = fromDbTime(candidate.frozen_time);
        const clock = frozen ? frozenClock(new Date(frozen)) : this.clock;
        try {
          if (await this.notify({ businessId: candidate.business_id, livemode: Boolean(candidate.livemode) }, candidate.id, clock)) fired++;
        } catch (err) {
          this.logger.error({ err, invoiceId: candidate.id }, 'invoice.overdue not recorded; the next sweep retries');
        }
      }
      after = batch[batch.length - 1].id;
      if (batch.length < this.batch) break;
    }
    return fired;
  }

  private candidates(after: number): Knex.QueryBuilder<Candidate, Candidate[]> {
    return Invoice.acrossTenants(ACCESS, this.db.current)
      .select('invoices.id', 'invoices.business_id', 'invoices.livemode')
      .whereIn('invoices.status', PAYABLE_STATUSES)
      .whereNull('invoices.overdue_notified_at')
      .whereRaw('invoices.total > invoices.amount_paid + invoices.amount_credited')
      .where('invoices.id', '>', after)
      .orderBy('invoices.id')
      .limit(this.batch) as unknown as Knex.QueryBuilder<Candidate, Candidate[]>;
  }

  /** Invoices on the real time: live mode, and test modes without a stored clock. */
  private async onRealTime(after: number): Promise<Candidate[]> {
    return this.candidates(after)
      .where('invoices.due_date', '<', utcDate(this.clock.now()))
      .whereRaw('not exists (select 1 from business_clocks where business_clocks.business_id = invoices.business_id and invoices.livemode = 0)');
  }

  /** Test-mode invoices of the businesses whose test clock is frozen, each judged by its frozen date. */
  private async onFrozenClocks(after: number): Promise<Candidate[]> {
    return this.candidates(after)
      .join('business_clocks', 'business_clocks.business_id', 'invoices.business_id')
      .select('business_clocks.frozen_time')
      .where('invoices.livemode', 0)
      .whereRaw('invoices.due_date < substr(business_clocks.frozen_time, 1, 10)');
  }
}
