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
 * - Each is one transaction: the invoice's row locked (as a payment locks it, so a payment committed
 *   first leaves nothing to remind of), the `invoice_reminders` row inserted unless (invoice_id,
 *   offset_days) is there already, and only when it was: the event `invoice.reminder_sent` and, in
 *   live mode, the e-mail to the client (queued, it leaves after the commit). Test mode writes no
 *   e-mail. Sweeps in several processes may pick the same reminder; one inserts it, the others
 *   change nothing.
 * - Dated on its day: `sent_at` is 00:00 UTC of the reminder's day, and the event's invoice is
 *   shown under a clock frozen then, even when the sweep runs later (downtime, a test clock moved
 *   on), as `invoice.overdue` is.
 * - Time, as the overdue sweep judges it: live mode and test modes without a stored clock by the
 *   real time, one query per offset in use and mode through `invoices_reminder_sweep` (status,
 *   livemode, due_date); a test mode whose clock is frozen (`business_clocks`) by its frozen time,
 *   read from the table, as `runDue` does for a test clock's advance.
 */
import { Knex } from 'knex';
import pLimit from 'p-limit';
import { Logger } from 'pino';
import { acrossTenants, Actor, systemActor } from '../auth/actor';
import { reminderOffsetsOf } from '../businesses/model';
import { Clock, frozenClock, systemClock, utcDate, withBusinessClock } from '../clock';
import { Tenancy, TimeDrivenWork } from '../db/clocks';
import { Database } from '../db/database';
import { CronSweep } from '../jobs/cron-sweep';
import { selectRows, writeRows } from '../db/statement';
import { fromDbTime, toDbTime } from '../db/time';
import { EmailQueue } from '../email/queue';
import { Outbox } from '../events/outbox';
import { addDays } from '../validation';
import { invoiceDetail } from './detail';
import { formatMoney, reminderEmail } from './email';
import { InvoiceLinks } from './links';
import { amountDue, Invoice, whereAwaitsPayment } from './model';
import { ReminderSentView } from './schema';
import { awaitsPayment, OWING_SQL } from './status';
import { SWEEP_CONCURRENCY } from './sweeps';

const ACCESS = acrossTenants('reminder sweep');

/** An invoice found due for the reminder of one offset. */
interface Candidate {
  id: number;
  business_id: number;
  livemode: number | boolean;
  due_date: string;
}

/** One reminder to send: the invoice, the offset, and the day it is dated. */
interface DueReminder {
  tenancy: Tenancy;
  invoiceId: number;
  offsetDays: number;
  day: string;
}


const OFFSETS_IN_USE = 'select distinct reminder_offsets from businesses where reminder_offsets is not null';
const OFFSETS_OF_BUSINESS = 'select reminder_offsets from businesses where id = ?';
/** The earliest due date after a given one among a business and mode's invoices awaiting payment (the (business_id, livemode, due_date) index). */
const NEXT_DUE_DATE = `select min(invoices.due_date) as due_date from invoices where invoices.business_id = ? and invoices.livemode = ? and ${OWING_SQL} and invoices.due_date > ?`;
/** Test modes whose clock is frozen, of businesses that remind. */
const FROZEN_TEST_MODES = `select business_clocks.business_id, business_clocks.frozen_time from business_clocks
  join businesses on businesses.id = business_clocks.business_id
 where business_clocks.livemode = 0 and businesses.reminder_offsets is not null order by business_clocks.business_id`;

/** Whom a reminder is from and to, in one statement (a sweep sends a thousand). */
const RECIPIENT = `select clients.name, clients.email, businesses.name as business_name from clients
  join businesses on businesses.id = clients.business_id
 where clients.id = ? and clients.business_id = ? and clients.livemode = ?`;

/** 00:00 UTC of a day, `YYYY-MM-DD`. */
function startOfDay(day: string): Date {
  return new Date(`${day}T00:00:00.000Z`);
}

export class ReminderSweep extends CronSweep implements TimeDrivenWork {
  /** Once per invoice and offset: a second insert of the pair changes nothing (the unique key). */
  private readonly insertOnce: string;
  /** SQL of (due_date + ? days) as `YYYY-MM-DD`, and how the offset is bound to it. */
  private readonly reminderDay: { sql: string; bind: (offset: number) => Knex.Value };
  /** SQL matching a business whose `reminder_offsets` lists the offset bound by `listedPattern`. */
  private readonly offsetListed: string;

  constructor(
    private readonly db: Database,
    private readonly outbox: Outbox,
    private readonly emails: EmailQueue,
    private readonly links: InvoiceLinks,
    logger: Logger,
    private readonly options: { batch?: number; clock?: Clock } = {},
  ) {
    super(logger, 'reminder sweep');
    const mysql = db.dialect === 'mysql';
    const columns = '(invoice_id, business_id, livemode, offset_days, sent_at) values (?, ?, ?, ?, ?)';
    this.insertOnce = mysql ? `insert ignore into invoice_reminders ${columns}` : `insert or ignore into invoice_reminders ${columns}`;
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
   * Sends every reminder of this business and mode due at or before `at`, oldest day first, each
   * dated on its own day (a test clock's advance). A reminder that cannot be recorded throws.
   */
  async runDue(tenancy: Tenancy, at: Date): Promise<void> {
    for (const reminder of await this.dueIn(tenancy, at)) await this.remind(reminder.tenancy, reminder.invoiceId, reminder.offsetDays);
  }

  /**
   * The first reminder day after `after` among this business and mode's invoices awaiting payment
   * (what lets a test clock's advance skip the days between): per offset, the earliest due date whose
   * reminder day is still to come. Reminders due by `after` itself were sent by `runDue` at `after`.
   */
  async nextDueAfter(tenancy: Tenancy, after: Date): Promise<Date | null> {
    const [business] = await selectRows<{ reminder_offsets: string | null }>(this.db.current, OFFSETS_OF_BUSINESS, [tenancy.businessId]);
    const today = utcDate(after);
    let next: string | null = null;
    for (const offsetDays of reminderOffsetsOf(business?.reminder_offsets ?? null)) {
      const [row] = await selectRows<{ due_date: string | null }>(this.db.current, NEXT_DUE_DATE, [tenancy.businessId, tenancy.livemode ? 1 : 0, addDays(today, -offsetDays)]);
      if (!row?.due_date) continue;
      const day = addDays(String(row.due_date).slice(0, 10), offsetDays);
      if (next === null || day < next) next = day;
    }
    return next === null ? null : startOfDay(next);
  }

  /**
   * Sends the reminder of `offsetDays` for an invoice, dated 00:00 UTC of due_date + offsetDays,
   * unless it was sent already or the invoice no longer awaits payment; false then. The caller has
   * found it due (the sweep, `runDue`), or makes it so (the CLI's `trigger invoice.reminder_sent`).
   */
  async remind(tenancy: Tenancy, invoiceId: number, offsetDays: number): Promise<boolean> {
    const actor = systemActor('reminder sweep', tenancy);
    return this.db.transaction(async (trx) => {
      // Locked as the payment path locks it: a payment or void committed first is seen here.
      const row = await Invoice.findOwn(actor, trx, invoiceId, { lock: 'update' });
      if (!row || !awaitsPayment(row)) return false;
      const sentAt = startOfDay(addDays(row.due_date, offsetDays));
      const { affectedRows } = await writeRows(trx, this.insertOnce, [invoiceId, tenancy.businessId, tenancy.livemode ? 1 : 0, offsetDays, toDbTime(sentAt)]);
      if (affectedRows !== 1) return false;
      const reminder: ReminderSentView = { offset_days: offsetDays, sent_at: sentAt.toISOString() };
      await withBusinessClock(frozenClock(sentAt), async () => {
        const invoice = await invoiceDetail(actor, row, trx, this.links);
        await this.outbox.record(trx, actor, 'invoice.reminder_sent', { invoice, reminder });
        if (tenancy.livemode) await this.queueEmail(trx, actor, row, offsetDays);
      });
      return true;
    });
  }

  /** The client's e-mail, queued in the reminder's transaction (it leaves after the commit): the amount due and the payment link. */
  private async queueEmail(trx: Knex.Transaction, actor: Actor, row: Invoice, offsetDays: number): Promise<void> {
    // The client as it is now (its address may have changed since the invoice was issued), as /send e-mails it.
    const [to] = await selectRows<{ name: string; email: string; business_name: string }>(trx, RECIPIENT, [row.client_id, actor.businessId, actor.livemode ? 1 : 0]);
    if (!to) throw new Error(`invoice ${row.id}: its business or client is gone`);
    const email = reminderEmail({
      businessName: to.business_name,
      clientName: to.name,
      clientEmail: to.email,
      number: row.number ?? '',
      amountDue: formatMoney(amountDue(row), row.currency),
      dueDate: row.due_date,
      paymentUrl: this.links.paymentUrl(row.payment_token),
      offsetDays,
    });
    await this.emails.enqueue(trx, actor, row.id, email, { attachInvoice: false });
    this.db.afterCommit(() => this.emails.nudge());
  }

  /**
   * Live mode and test modes without a stored clock: each offset in use, judged against the real UTC
   * date, a few reminders at once (their order across invoices means nothing).
   */
  private async onRealTime(): Promise<number> {
    const today = utcDate(this.clock.now());
    const offsets = await this.offsetsInUse();
    let sent = 0;
    for (const livemode of [true, false]) {
      for (const offsetDays of offsets) {
        let after = 0;
        while (!this.stopped) {
          const batch = await this.candidates(offsetDays, addDays(today, -offsetDays), { livemode, realTime: true }, after);
          const limit = pLimit(SWEEP_CONCURRENCY);
          await Promise.all(
            batch.map((candidate) =>
              limit(async () => {
                if (!this.stopped && (await this.tryRemind({ businessId: candidate.business_id, livemode }, candidate.id, offsetDays))) sent++;
              }),
            ),
          );
          if (batch.length < this.batch) break;
          after = batch[batch.length - 1].id;
        }
      }
    }
    return sent;
  }

  /**
   * Test modes whose clock is frozen, each by its frozen time read from the table every process
   * shares (not the per-process cache), one reminder at a time in day order, as `runDue` sends them.
   */
  private async onFrozenClocks(): Promise<number> {
    let sent = 0;
    for (const frozen of await selectRows<{ business_id: number; frozen_time: string | Date }>(this.db.current, FROZEN_TEST_MODES, [])) {
      if (this.stopped) break;
      const tenancy = { businessId: frozen.business_id, livemode: false };
      for (const reminder of await this.dueIn(tenancy, new Date(fromDbTime(frozen.frozen_time)!))) {
        if (this.stopped) break;
        if (await this.tryRemind(tenancy, reminder.invoiceId, reminder.offsetDays)) sent++;
      }
    }
    return sent;
  }

  /** `remind`, with a failure logged and passed over: the next sweep retries it. */
  private async tryRemind(tenancy: Tenancy, invoiceId: number, offsetDays: number): Promise<boolean> {
    try {
      return await this.remind(tenancy, invoiceId, offsetDays);
    } catch (err) {
      this.logger.error({ err, invoiceId, offsetDays }, 'payment reminder not recorded; the next sweep retries');
      return false;
    }
  }

  /** The offsets some business reminds on. */
  private async offsetsInUse(): Promise<number[]> {
    const rows = await selectRows<{ reminder_offsets: string }>(this.db.current, OFFSETS_IN_USE, []);
    return [...new Set(rows.flatMap((row) => reminderOffsetsOf(row.reminder_offsets)))].sort((a, b) => a - b);
  }

  /** The reminders of one business and mode due at or before `at`, by day, then invoice and offset. */
  private async dueIn(tenancy: Tenancy, at: Date): Promise<DueReminder[]> {
    const [business] = await selectRows<{ reminder_offsets: string | null }>(this.db.current, OFFSETS_OF_BUSINESS, [tenancy.businessId]);
    const today = utcDate(at);
    const due: DueReminder[] = [];
    for (const offsetDays of reminderOffsetsOf(business?.reminder_offsets ?? null)) {
      let after = 0;
      for (;;) {
        const batch = await this.candidates(offsetDays, addDays(today, -offsetDays), { ...tenancy, realTime: false }, after);
        for (const candidate of batch) due.push({ tenancy, invoiceId: candidate.id, offsetDays, day: addDays(candidate.due_date, offsetDays) });
        if (batch.length < this.batch) break;
        after = batch[batch.length - 1].id;
      }
    }
    return due.sort((a, b) => a.day.localeCompare(b.day) || a.invoiceId - b.invoiceId || a.offsetDays - b.offsetDays);
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
      .whereRaw('not exists (select 1 from invoice_reminders where invoice_reminders.invoice_id = invoices.id and invoice_reminders.offset_days = ?)', [offsetDays])
      .where('invoices.id', '>', after)
      .orderBy('invoices.id')
      .limit(this.batch);
    if (scope.businessId !== undefined) void query.where('invoices.business_id', scope.businessId);
    if (scope.realTime && !scope.livemode) void query.whereRaw('not exists (select 1 from business_clocks where business_clocks.business_id = invoices.business_id)');
    return query as unknown as Knex.QueryBuilder<Candidate, Candidate[]>;
  }
}
