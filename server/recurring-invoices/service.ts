/**
 * Recurring invoices: schedules that issue one invoice of their lines to their client on each date,
 * through the invoices' own create and send path (pricing, numbering, events and e-mail are
 * InvoiceService's). A date is claimed by locking the schedule's row (`select … for update`) and
 * finding it active with that date next, in the transaction that issues its invoice and moves the
 * schedule on, so it is issued once however many processes try (one that waited for the lock finds
 * the date gone); the invoice's unique (recurring_invoice_id, issue_date) says so again in the database.
 */
import { Knex } from 'knex';
import { Actor, systemActor } from '../auth/actor';
import { BusinessService } from '../businesses/service';
import { Client } from '../clients/model';
import { UNKNOWN_CLIENT_ID } from '../clients/service';
import { frozenClock, todayUtc, utcMidnight, withBusinessClock } from '../clock';
import { BusinessClocks, Tenancy } from '../db/clocks';
import { Database } from '../db/database';
import { InvalidState, NotFound, ValidationFailed } from '../errors';
import { firstPagesByMode, Page, paginate } from '../http/pagination';
import { Invoice } from '../invoices/model';
import { priceInvoice, rateIdsOf } from '../invoices/pricing';
import { InvoiceService } from '../invoices/service';
import { initialMetadata, mergedMetadata } from '../metadata/store';
import { fromQuantityUnits, toMajor } from '../money/amount';
import { TaxExempt } from '../money/tax';
import { TaxRateService } from '../tax-rates/service';
import { addDays } from '../validation';
import { Cadence, dateAfter, firstDateFrom } from './calendar';
import { RecurringInvoice, ScheduleLine } from './model';
import { RecurringInvoiceChanges, RecurringInvoiceInput, RecurringInvoiceListParams, RecurringInvoiceView, ScheduleLineInput } from './schema';
import { toRecurringInvoiceView } from './view';

export const NOT_BEFORE_TODAY = 'must be today or later (UTC, by the clock of the business and mode)';

function cadenceOf(row: RecurringInvoice): Cadence {
  return { start_date: row.start_date, interval: row.interval_unit, interval_count: row.interval_count };
}

/** The schedule's next date from `date` on, or its end: null and `ended` past end_date. */
function fromDate(date: string, endDate: string | null): { next_issue_date: string | null; ended: boolean } {
  return endDate !== null && date > endDate ? { next_issue_date: null, ended: true } : { next_issue_date: date, ended: false };
}

export class RecurringInvoiceService {
  constructor(
    private readonly db: Database,
    private readonly businesses: BusinessService,
    private readonly invoices: InvoiceService,
    private readonly taxRates: TaxRateService,
    private readonly clocks: BusinessClocks,
  ) {}

  async list(actor: Actor, params: RecurringInvoiceListParams): Promise<Page<RecurringInvoiceView>> {
    const query = RecurringInvoice.of(actor, this.db.current);
    if (params.status) query.where('recurring_invoices.status', params.status);
    if (params.client_id) query.where('recurring_invoices.client_id', params.client_id);
    const page = await paginate(query, RecurringInvoice.tableName, params, (row) => row);
    const invoiceIds = await this.invoiceIdsOf(actor, page.data, this.db.current);
    return { ...page, data: page.data.map((row) => toRecurringInvoiceView(row, invoiceIds.get(row.id) ?? [])) };
  }

  async get(actor: Actor, id: number): Promise<RecurringInvoiceView> {
    return this.view(actor, await this.find(actor, id, this.db.current), this.db.current);
  }

  create(actor: Actor, input: RecurringInvoiceInput): Promise<RecurringInvoiceView> {
    return this.db.transaction(async (trx) => {
      const errors = new Map<string, string[]>();
      // A shared lock: a concurrent delete of the client waits for this schedule, then the foreign key refuses it.
      const client = await Client.findOwn(actor, trx, input.client_id, { lock: 'share' });
      if (!client) errors.set('client_id', [UNKNOWN_CLIENT_ID]);
      if (input.start_date < todayUtc()) errors.set('start_date', [NOT_BEFORE_TODAY]);
      const defaults = input.default_tax_rate_ids ?? [];
      const items = await this.linesOf(trx, actor, input.items, { currency: input.currency, defaults, taxExempt: client?.tax_exempt ?? 'none', forNewLines: true, errors });
      if (errors.size) throw new ValidationFailed(Object.fromEntries(errors));

      const row = await RecurringInvoice.create(actor, trx, {
        client_id: input.client_id,
        currency: input.currency,
        items,
        default_tax_rate_ids: defaults,
        interval_unit: input.interval,
        interval_count: input.interval_count ?? 1,
        start_date: input.start_date,
        end_date: input.end_date ?? null,
        days_until_due: input.days_until_due,
        auto_send: input.auto_send ?? true,
        status: 'active',
        next_issue_date: input.start_date,
        metadata: initialMetadata(input.metadata),
      });
      return toRecurringInvoiceView(row, []);
    });
  }

  /** The lines, dates, terms, metadata and `status` (active ⇄ paused) of a schedule that has not ended. */
  update(actor: Actor, id: number, changes: RecurringInvoiceChanges): Promise<RecurringInvoiceView> {
    return this.db.transaction(async (trx) => {
      const row = await this.find(actor, id, trx, 'update');
      if (row.status === 'ended') throw new InvalidState('An ended recurring invoice cannot be changed; create another');
      const errors = new Map<string, string[]>();
      const today = todayUtc();
      const invoiceIds = (await this.invoiceIdsOf(actor, [row], trx)).get(row.id) ?? [];
      const patch: Partial<RecurringInvoice> = {};

      if (changes.items !== undefined || changes.default_tax_rate_ids !== undefined) {
        const client = await Client.findOwn(actor, trx, row.client_id);
        const defaults = changes.default_tax_rate_ids ?? row.default_tax_rate_ids;
        const lines = changes.items ?? row.items.map((line) => lineInput(line, row.currency));
        patch.items = await this.linesOf(trx, actor, lines, { currency: row.currency, defaults, taxExempt: client?.tax_exempt ?? 'none', forNewLines: true, errors });
        patch.default_tax_rate_ids = defaults;
      }
      if (changes.days_until_due !== undefined) patch.days_until_due = changes.days_until_due;
      if (changes.auto_send !== undefined) patch.auto_send = changes.auto_send;
      if (changes.metadata) patch.metadata = mergedMetadata(row.metadata, changes.metadata);

      // The dates: a new start re-anchors every date, so only before the first invoice.
      const startDate = changes.start_date ?? row.start_date;
      if (changes.start_date !== undefined && changes.start_date !== row.start_date) {
        if (invoiceIds.length) errors.set('start_date', ['cannot change once the schedule has issued an invoice (change end_date, or cancel it and create another)']);
        else if (changes.start_date < today) errors.set('start_date', [NOT_BEFORE_TODAY]);
      }
      const endDate = changes.end_date === undefined ? row.end_date : changes.end_date;
      if (endDate !== null && endDate < startDate) errors.set('end_date', [`must be on or after start_date (${startDate})`]);
      if (errors.size) throw new ValidationFailed(Object.fromEntries(errors));
      if (changes.start_date !== undefined) patch.start_date = startDate;
      if (changes.end_date !== undefined) patch.end_date = endDate;

      const status = changes.status ?? row.status;
      const cadence = { ...cadenceOf(row), start_date: startDate };
      let next = row.next_issue_date!;
      if (startDate !== row.start_date) next = startDate;
      // Resuming skips the dates that came while paused: the next date is the first after today. A start
      // moved in the same change is a date chosen now (today or later), not one that came while paused.
      if (row.status === 'paused' && status === 'active' && startDate === row.start_date) next = firstDateFrom(cadence, next > today ? next : addDays(today, 1));
      const { next_issue_date, ended } = fromDate(next, endDate);
      patch.next_issue_date = next_issue_date;
      patch.status = ended ? 'ended' : status;

      await row.$query(trx).patch(patch);
      return toRecurringInvoiceView(row, invoiceIds);
    });
  }

  /** Ends a schedule: it issues nothing more (final). */
  cancel(actor: Actor, id: number): Promise<RecurringInvoiceView> {
    return this.db.transaction(async (trx) => {
      const row = await this.find(actor, id, trx, 'update');
      if (row.status === 'ended') throw new InvalidState('This recurring invoice has ended already');
      await row.$query(trx).patch({ status: 'ended', next_issue_date: null });
      return this.view(actor, row, trx);
    });
  }

  /**
   * Issues the schedule's invoice of `date` if that date is still its next and it is active, dated
   * then: the invoice, its events and the schedule's move to its next date (or its end) commit
   * together, under the business clock of `date`'s 00:00 UTC, so the invoice is created, issued and
   * sent at that moment (or when the schedule was made, if that was later: a schedule made during its
   * first date issues it then, never before it existed). Resolves with the schedule's next date after
   * it (null: ended), or `undefined` when it was not this call's to issue (another process did, or it changed).
   */
  async issue(tenancy: Tenancy, id: number, date: string): Promise<string | null | undefined> {
    const actor = systemActor('recurring invoices', tenancy);
    const midnight = utcMidnight(date);
    return this.db.transaction(async (trx) => {
      // The claim of `date`: only while the schedule is active and that date is still the one to issue.
      const row = await RecurringInvoice.findOwn(actor, trx, id, { lock: 'update' });
      if (!row || row.status !== 'active' || row.next_issue_date !== date) return undefined;
      const made = new Date(row.created_at);
      return withBusinessClock(frozenClock(made > midnight ? made : midnight), async () => {
        const { next_issue_date, ended } = fromDate(dateAfter(cadenceOf(row), date), row.end_date);
        await row.$query(trx).patch({ next_issue_date, status: ended ? 'ended' : 'active' });
        await this.invoices.createForSchedule(
          actor,
          {
            client_id: row.client_id,
            currency: row.currency,
            items: row.items.map((line) => lineInput(line, row.currency)),
            default_tax_rate_ids: row.default_tax_rate_ids,
            issue_date: date,
            due_date: addDays(date, row.days_until_due),
          },
          { recurringInvoiceId: row.id, email: row.auto_send },
        );
        return next_issue_date;
      });
    });
  }

  /** `invoicing recurring list`: a business's schedules of one mode or both (at most 100 per mode). */
  async listForOwner(businessId: number, filters: { mode?: 'live' | 'test'; status?: RecurringInvoiceListParams['status'] }): Promise<{ data: RecurringInvoiceView[]; more: boolean }> {
    await this.businesses.get(businessId);
    return firstPagesByMode(businessId, filters.mode, (actor, page) => this.list(actor, { ...page, ...(filters.status ? { status: filters.status } : {}) }));
  }

  /** `invoicing recurring create`, under the clock of the business and mode (a test mode's may be frozen). */
  createForOwner(businessId: number, mode: 'live' | 'test', input: RecurringInvoiceInput): Promise<RecurringInvoiceView> {
    return this.actForOwner(businessId, mode, (actor) => this.create(actor, input));
  }

  /** `invoicing recurring show`. */
  getForOwner(businessId: number, mode: 'live' | 'test', id: number): Promise<RecurringInvoiceView> {
    return this.actForOwner(businessId, mode, (actor) => this.get(actor, id));
  }

  /** `invoicing recurring pause|resume`. */
  setStatusForOwner(businessId: number, mode: 'live' | 'test', id: number, status: 'active' | 'paused'): Promise<RecurringInvoiceView> {
    return this.actForOwner(businessId, mode, (actor) => this.update(actor, id, { status }));
  }

  /** `invoicing recurring cancel`. */
  cancelForOwner(businessId: number, mode: 'live' | 'test', id: number): Promise<RecurringInvoiceView> {
    return this.actForOwner(businessId, mode, (actor) => this.cancel(actor, id));
  }

  /** The CLI acts for a business that exists (else 'Business not found'), on its clock. */
  private async actForOwner<T>(businessId: number, mode: 'live' | 'test', work: (actor: Actor) => Promise<T>): Promise<T> {
    await this.businesses.get(businessId);
    const tenancy = { businessId, livemode: mode === 'live' };
    return this.clocks.actFor(tenancy, () => work(systemActor('cli', tenancy)));
  }

  /**
   * The lines as the schedule keeps them, priced by the invoices' engine for the client as it is now
   * (so a price with too many decimals, an unknown or archived rate or rates that cannot go together
   * are refused now, not on the first issue date); problems go into `errors`.
   */
  private async linesOf(
    trx: Knex.Transaction,
    actor: Actor,
    items: ScheduleLineInput[],
    terms: { currency: string; defaults: number[]; taxExempt: TaxExempt; forNewLines: boolean; errors: Map<string, string[]> },
  ): Promise<ScheduleLine[]> {
    const { ids, fieldsOf } = rateIdsOf(items, terms.defaults);
    let rates;
    try {
      rates = await this.taxRates.termsFor(actor, trx, ids, { forNewLines: terms.forNewLines, fieldsOf });
    } catch (err) {
      if (!(err instanceof ValidationFailed)) throw err;
      for (const [field, messages] of Object.entries(err.details ?? {})) terms.errors.set(field, messages);
      return [];
    }
    const priced = priceInvoice(items, { currency: terms.currency, default_tax_rate_ids: terms.defaults, tax_exempt: terms.taxExempt }, rates, terms.errors);
    return priced.items.map((line) => ({ description: line.description, quantity_units: line.quantity_units, unit_price: line.unit_price, tax_rate_ids: line.tax_rate_ids }));
  }

  private async view(actor: Actor, row: RecurringInvoice, conn: Knex): Promise<RecurringInvoiceView> {
    return toRecurringInvoiceView(row, (await this.invoiceIdsOf(actor, [row], conn)).get(row.id) ?? []);
  }

  /** The invoices each schedule issued, oldest first, in one query. */
  private async invoiceIdsOf(actor: Actor, rows: readonly RecurringInvoice[], conn: Knex): Promise<Map<number, number[]>> {
    const ids = new Map<number, number[]>(rows.map((row) => [row.id, []]));
    if (!rows.length) return ids;
    const issued = (await Invoice.of(actor, conn)
      .select('invoices.id', 'invoices.recurring_invoice_id')
      .whereIn('invoices.recurring_invoice_id', [...ids.keys()])
      .orderBy('invoices.id')) as Pick<Invoice, 'id' | 'recurring_invoice_id'>[];
    for (const invoice of issued) ids.get(invoice.recurring_invoice_id!)?.push(invoice.id);
    return ids;
  }

  private async find(actor: Actor, id: number, conn: Knex, lock?: 'update'): Promise<RecurringInvoice> {
    const row = await RecurringInvoice.findOwn(actor, conn, id, { lock });
    if (!row) throw new NotFound('Recurring invoice', id);
    return row;
  }
}

/** A kept line as invoice input again (major units). */
function lineInput(line: ScheduleLine, currency: string): ScheduleLineInput {
  return {
    description: line.description,
    quantity: fromQuantityUnits(line.quantity_units),
    unit_price: toMajor(line.unit_price, currency),
    ...(line.tax_rate_ids ? { tax_rate_ids: line.tax_rate_ids } : {}),
  };
}
