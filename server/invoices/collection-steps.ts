/**
 * The collection steps of issued invoices, the reminder sweep's and the overdue sweep's, worked many
 * to a transaction: a payment reminder of one offset (reminders.ts) and `invoice.overdue`
 * (overdue.ts). A sweep over 100 000 invoices finds a thousand of each; one transaction per step was
 * a dozen statements and a commit each (bench:collections), and one per batch is about as many for
 * fifty.
 *
 * One batch is one transaction:
 * - its invoices' rows are locked (`for update`, in id order), as a payment, a void or a credit note
 *   locks them, so each of those lands wholly before or after the batch; then their items, payments
 *   and reminders are read, a statement each for the whole batch;
 * - each step is judged on the locked row as the batch has changed it so far, in the order given (a
 *   test clock's advance gives them in time order): a reminder only while the invoice awaits payment
 *   and once per invoice and offset; `invoice.overdue` only while the invoice is overdue on the
 *   step's date and once per invoice;
 * - each step that takes effect is dated at the moment it was due (a reminder at 00:00 UTC of its
 *   day, `invoice.overdue` when the invoice became overdue), and so is the invoice its event shows
 *   (`overdue`, `reminders_sent` as they were then);
 * - the reminders, the overdue marks, the events with their deliveries and the live reminders'
 *   e-mails are then written, a statement or two each, and commit together.
 * Sweeps in several processes may pick the same steps: the row locks order them, and the second
 * finds them done. A batch that fails (a deadlock, a client gone) is worked again one step per
 * transaction, so one bad invoice holds back only itself.
 */
import { Knex } from 'knex';
import { acrossTenants, Actor, systemActor } from '../auth/actor';
import { frozenClock, utcMidnight, withBusinessClock } from '../clock';
import { Tenancy, TimeDrivenWork } from '../db/clocks';
import { Database } from '../db/database';
import { selectRows, StoredRow, writeRows } from '../db/statement';
import { toDbTime } from '../db/time';
import { EmailQueue } from '../email/queue';
import { NewEvent, Outbox } from '../events/outbox';
import { Payment } from '../payments/model';
import { toPaymentView } from '../payments/view';
import { addDays } from '../validation';
import { itemsOf, partiesOf } from './detail';
import { invoiceEmailFacts, reminderEmail } from './email';
import { InvoiceLinks } from './links';
import { Invoice, InvoiceItem, InvoiceReminder } from './model';
import { InvoiceDetail } from './schema';
import { awaitsPayment, isOverdue, overdueSince } from './status';
import { InvoiceParties, toInvoiceView } from './view';

const ACCESS = acrossTenants('collection steps');

/** The steps of one transaction, at most. */
export const STEPS_PER_BATCH = 50;

/** One collection step on an invoice of a business and mode. */
export type CollectionStep =
  /** The payment reminder of `offsetDays` (days from the due date). */
  | { kind: 'reminder'; tenancy: Tenancy; invoiceId: number; offsetDays: number }
  /** `invoice.overdue`, if the invoice is overdue on `today` (a UTC date, by its business and mode's clock). */
  | { kind: 'overdue'; tenancy: Tenancy; invoiceId: number; today: string };

/** A step with the moment it falls due, as the sweeps find them: what orders a test clock's advance. */
export interface DueStep {
  at: Date;
  step: CollectionStep;
}

/** Time order; at one moment reminders come before `invoice.overdue` (the +1 reminder reads "overdue since"), then by invoice and offset. */
export function inTimeOrder(a: DueStep, b: DueStep): number {
  const rank = (due: DueStep) => (due.step.kind === 'reminder' ? 0 : 1);
  const offset = (due: DueStep) => (due.step.kind === 'reminder' ? due.step.offsetDays : 0);
  return a.at.getTime() - b.at.getTime() || rank(a) - rank(b) || a.step.invoiceId - b.step.invoiceId || offset(a) - offset(b);
}

/** 00:00 UTC of the day a reminder of `offsetDays` is due for an invoice due on `dueDate`. */
export function reminderMoment(dueDate: string, offsetDays: number): Date {
  return utcMidnight(addDays(dueDate, offsetDays));
}

/** Whom a batch's reminders are from and to, in one statement: the clients as they are now (an address may have changed since the invoice was issued). */
function recipientsSql(clients: number): string {
  return `select clients.id, clients.business_id, clients.livemode, clients.name, clients.email, businesses.name as business_name from clients
  join businesses on businesses.id = clients.business_id
 where clients.id in (${Array.from({ length: clients }, () => '?').join(', ')})`;
}

interface Recipient {
  id: number;
  business_id: number;
  livemode: number | boolean;
  name: string;
  email: string;
  business_name: string;
}

/** What one batch reads of its invoices, and changes as its steps take effect. */
interface BatchState {
  rows: Map<number, Invoice>;
  items: Map<number, InvoiceItem[]>;
  payments: Map<number, Payment[]>;
  reminders: Map<number, Pick<InvoiceReminder, 'offset_days' | 'sent_at'>[]>;
  parties: Map<number, InvoiceParties>;
}

const sameTenancy = (row: Invoice, tenancy: Tenancy) => row.business_id === tenancy.businessId && Boolean(row.livemode) === tenancy.livemode;

export class CollectionSteps {
  constructor(
    private readonly db: Database,
    private readonly outbox: Outbox,
    private readonly emails: EmailQueue,
    private readonly links: InvoiceLinks,
  ) {}

  /**
   * Works `steps` in order, STEPS_PER_BATCH to a transaction; resolves with how many took effect. A
   * batch that fails is worked again a step at a time; a step that fails then is passed to `onError`
   * (a sweep logs it, and its next sweep tries it again), or thrown when there is none (an advance).
   */
  async work(steps: readonly CollectionStep[], onError?: (err: unknown, step: CollectionStep) => void): Promise<number> {
    let done = 0;
    for (let from = 0; from < steps.length; from += STEPS_PER_BATCH) {
      const batch = steps.slice(from, from + STEPS_PER_BATCH);
      try {
        done += await this.workBatch(batch);
      } catch (err) {
        if (batch.length === 1 && !onError) throw err;
        for (const step of batch) {
          try {
            done += await this.workBatch([step]);
          } catch (stepErr) {
            if (!onError) throw stepErr;
            onError(stepErr, step);
          }
        }
      }
    }
    return done;
  }

  /** One transaction: the steps judged in order on their locked invoices, and what took effect written together. */
  private workBatch(steps: readonly CollectionStep[]): Promise<number> {
    return this.db.transaction(async (trx) => {
      const state = await this.read(trx, steps);
      const reminders: { owner: Actor; row: StoredRow }[] = [];
      const marks = new Map<number, Date>();
      const events: NewEvent[] = [];
      const emails: { actor: Actor; row: Invoice; offsetDays: number }[] = [];
      for (const step of steps) {
        const row = state.rows.get(step.invoiceId);
        if (!row || !sameTenancy(row, step.tenancy)) continue;
        const actor = systemActor(step.kind === 'reminder' ? 'reminder sweep' : 'overdue sweep', step.tenancy);
        if (step.kind === 'reminder') {
          const sent = state.reminders.get(row.id) ?? [];
          if (!awaitsPayment(row) || sent.some((reminder) => reminder.offset_days === step.offsetDays)) continue;
          const sentAt = reminderMoment(row.due_date, step.offsetDays);
          const reminder = { offset_days: step.offsetDays, sent_at: sentAt.toISOString() };
          state.reminders.set(row.id, [...sent, reminder].sort((a, b) => a.sent_at.localeCompare(b.sent_at) || a.offset_days - b.offset_days));
          reminders.push({ owner: actor, row: { invoice_id: row.id, offset_days: step.offsetDays, sent_at: toDbTime(sentAt) } });
          events.push({ actor, type: 'invoice.reminder_sent', data: { invoice: this.detail(state, row, sentAt), reminder }, at: sentAt });
          if (step.tenancy.livemode) emails.push({ actor, row, offsetDays: step.offsetDays });
        } else {
          if (row.overdue_notified_at !== null || !isOverdue(row, step.today)) continue;
          const since = overdueSince(row);
          row.overdue_notified_at = since.toISOString();
          marks.set(row.id, since);
          events.push({ actor, type: 'invoice.overdue', data: { invoice: this.detail(state, row, since) }, at: since });
        }
      }
      // Once per invoice and offset: the unique key would refuse a second, which the batch's lock on the invoice keeps from coming.
      await InvoiceReminder.insertOwned(trx, reminders);
      if (marks.size) await this.mark(trx, marks);
      await this.outbox.recordMany(trx, events);
      if (emails.length) await this.queueEmails(trx, emails);
      return events.length;
    });
  }

  /** The batch's invoices, locked, with their items, payments, reminders and parties: a statement each. */
  private async read(trx: Knex.Transaction, steps: readonly CollectionStep[]): Promise<BatchState> {
    const ids = [...new Set(steps.map((step) => step.invoiceId))].sort((a, b) => a - b);
    const locked = await Invoice.acrossTenants(ACCESS, trx).whereIn('invoices.id', ids).orderBy('invoices.id').forUpdate();
    const [items, payments, reminders] = await Promise.all([
      itemsOf(locked, trx),
      Payment.acrossTenants(ACCESS, trx).whereIn('payments.invoice_id', ids).orderBy('payments.id'),
      InvoiceReminder.acrossTenants(ACCESS, trx).whereIn('invoice_reminders.invoice_id', ids).orderBy(['invoice_reminders.sent_at', 'invoice_reminders.offset_days']),
    ]);
    const state: BatchState = { rows: new Map(locked.map((row) => [row.id, row])), items, payments: new Map(), reminders: new Map(), parties: new Map() };
    for (const payment of payments) state.payments.set(payment.invoice_id, [...(state.payments.get(payment.invoice_id) ?? []), payment]);
    for (const reminder of reminders) state.reminders.set(reminder.invoice_id, [...(state.reminders.get(reminder.invoice_id) ?? []), reminder]);
    // An issued invoice carries its parties' snapshot; only one without it (issued before snapshots) reads them, per business and mode.
    const byTenancy = new Map<string, Invoice[]>();
    for (const row of locked) byTenancy.set(`${row.business_id} ${row.livemode}`, [...(byTenancy.get(`${row.business_id} ${row.livemode}`) ?? []), row]);
    for (const rows of byTenancy.values()) {
      const actor = systemActor('reminder sweep', { businessId: rows[0].business_id, livemode: Boolean(rows[0].livemode) });
      for (const [id, parties] of await partiesOf(actor, rows, trx)) state.parties.set(id, parties);
    }
    return state;
  }

  /** The invoice as its event shows it at `at`: under a clock frozen then, as the batch has left it so far. */
  private detail(state: BatchState, row: Invoice, at: Date): InvoiceDetail {
    return withBusinessClock(frozenClock(at), () => ({
      ...toInvoiceView(row, state.items.get(row.id) ?? [], this.links, state.parties.get(row.id)!, state.reminders.get(row.id) ?? []),
      payments: (state.payments.get(row.id) ?? []).map(toPaymentView),
    }));
  }

  /** The overdue marks, in one statement: each invoice's moment, only while still unmarked (the rule was checked on the locked row). */
  private async mark(trx: Knex.Transaction, marks: Map<number, Date>): Promise<void> {
    const cases = [...marks].map(() => 'when ? then ?').join(' ');
    const bindings = [...marks].flatMap(([id, since]) => [id, toDbTime(since)]);
    const ids = [...marks.keys()];
    await writeRows(
      trx,
      `update invoices set overdue_notified_at = case id ${cases} end where id in (${ids.map(() => '?').join(', ')}) and overdue_notified_at is null`,
      [...bindings, ...ids],
    );
  }

  /** The live reminders' e-mails to the clients, queued with the batch (they leave after the commit): the amount due and the payment link. */
  private async queueEmails(trx: Knex.Transaction, emails: readonly { actor: Actor; row: Invoice; offsetDays: number }[]): Promise<void> {
    const clientIds = [...new Set(emails.map(({ row }) => row.client_id))];
    const recipients = new Map((await selectRows<Recipient>(trx, recipientsSql(clientIds.length), clientIds)).map((recipient) => [recipient.id, recipient]));
    await this.emails.enqueueAll(
      trx,
      emails.map(({ actor, row, offsetDays }) => {
        const to = recipients.get(row.client_id);
        if (!to || to.business_id !== row.business_id || Boolean(to.livemode) !== Boolean(row.livemode)) throw new Error(`invoice ${row.id}: its business or client is gone`);
        const parties = { businessName: to.business_name, clientName: to.name, clientEmail: to.email };
        const message = reminderEmail({ ...invoiceEmailFacts(row, parties, this.links.paymentUrl(row.payment_token)), offsetDays });
        return { actor, invoiceId: row.id, message, attachInvoice: false };
      }),
    );
  }
}

/** What finds collection steps due for one business and mode by a moment: the reminder sweep, the overdue sweep. */
export interface StepSource {
  /** The steps due by `at` of the business and mode's invoices whose id is above `after`. */
  dueBy(tenancy: Tenancy, at: Date, after?: number): Promise<DueStep[]>;
}

/**
 * The collection steps of one business and mode as time-driven work: every step due by `at`, of
 * every source, worked in time order, each dated at its moment. It acts only on invoices that exist
 * (issuing them is another work's), so a test clock's advance runs it for everything due before each
 * moment that other work names (`until`), not at every midnight.
 */
export class FollowUpWork implements TimeDrivenWork {
  constructor(
    private readonly steps: CollectionSteps,
    private readonly sources: readonly StepSource[],
  ) {}

  /** A step that fails is thrown (the advance answers it, and running it again finishes what is left). */
  async runDue(tenancy: Tenancy, at: Date): Promise<void> {
    await this.work(await this.gather(tenancy, at, 0));
  }

  /**
   * The follow-ups of one advance to `until`, as a function of each stop it makes. Gathering every
   * stop's steps from all the business's invoices was most of an advance's follow-up time (a year:
   * 145 reads of every invoice, for each source), so at each stop it gathers the steps due by
   * `until` of only the invoices it has not read yet (made since: ids above every id gathered), keeps
   * them, and works those due by the stop. A step gathered early is judged when it is worked, on the
   * locked row (an invoice paid meanwhile is not reminded). At `until`, once everything kept is worked,
   * one gather of every invoice finds what something else than the advance made due meanwhile (a draft
   * sent through the API while the advance ran).
   */
  until(tenancy: Tenancy, until: Date): (at: Date) => Promise<void> {
    let kept: DueStep[] = [];
    let gatheredUpTo = 0;
    return async (at) => {
      const fresh = await this.gather(tenancy, until, gatheredUpTo);
      for (const due of fresh) gatheredUpTo = Math.max(gatheredUpTo, due.step.invoiceId);
      const all = [...kept, ...fresh].sort(inTimeOrder);
      kept = all.filter((due) => due.at > at);
      await this.work(all.filter((due) => due.at <= at));
      if (at >= until) await this.runDue(tenancy, until);
    };
  }

  private async gather(tenancy: Tenancy, at: Date, after: number): Promise<DueStep[]> {
    return (await Promise.all(this.sources.map((source) => source.dueBy(tenancy, at, after)))).flat().sort(inTimeOrder);
  }

  private async work(due: readonly DueStep[]): Promise<void> {
    await this.steps.work(due.map(({ step }) => step));
  }
}
