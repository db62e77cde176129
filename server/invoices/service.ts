/**
 * Invoices: drafts with line items, issuing with gapless numbers, e-mail, the payment page's view,
 * and the events of each change written in the change's own transaction. Payments are recorded by
 * the payments service; pricing and views are the pure modules beside this one.
 */
import { randomBytes } from 'node:crypto';
import { Knex } from 'knex';
import { acrossTenants, Actor, SystemActor, systemActor } from '../auth/actor';
import { Business } from '../businesses/model';
import { BusinessService } from '../businesses/service';
import { toSellerSnapshot } from '../businesses/view';
import { Client } from '../clients/model';
import { UNKNOWN_CLIENT_ID } from '../clients/service';
import { toBuyerSnapshot } from '../clients/view';
import { businessClock, todayUtc } from '../clock';
import { Database } from '../db/database';
import { EmailQueue } from '../email/queue';
import { InvalidState, NotFound, ValidationFailed } from '../errors';
import { NewEvent, Outbox } from '../events/outbox';
import { Page, paginate } from '../http/pagination';
import { dropMetadataIndex, indexMetadata, initialMetadata, updateMetadata, whereMetadata } from '../metadata/store';
import { toMajor } from '../money/amount';
import { TaxedInvoice, TaxExempt } from '../money/tax';
import { TaxRateService } from '../tax-rates/service';
import { addDays } from '../validation';
import { InvoiceLinks } from './links';
import { invoiceDetail, itemsOf, KnownOfInvoice, partiesOf } from './detail';
import { invoiceEmail, invoiceEmailFacts } from './email';
import { amountDue, Invoice, InvoiceItem, InvoiceReminder } from './model';
import { isOverdue, overdueSql } from './status';
import { drawInvoiceNumber } from './numbering';
import { itemsAsInput, PricedInvoice, PricedItem, priceInvoice, rateIdsOf, TaxTerms } from './pricing';
import type { EinvoiceFormat } from '../businesses/schema';
import { InvoiceChanges, InvoiceDetail, InvoiceInput, InvoiceListParams, InvoiceView, ItemInput, SentInvoice } from './schema';
import { toInvoiceView } from './view';

export interface IssuedInvoice {
  invoice: InvoiceDetail;
  payment_url: string;
}

const DEFAULT_TERM_DAYS = 30;

/** `?overdue=`: the overdue rule as a query, on the business clock's UTC date (through the (business_id, livemode, due_date) index). */
function whereOverdue(query: ReturnType<typeof Invoice.of>, overdue: boolean): void {
  const rule = overdueSql('?');
  void query.whereRaw(overdue ? rule : `not (${rule})`, [todayUtc()]);
}

export class InvoiceService {
  constructor(
    private readonly db: Database,
    private readonly businesses: BusinessService,
    private readonly emails: EmailQueue,
    private readonly outbox: Outbox,
    private readonly links: InvoiceLinks,
    private readonly taxRates: TaxRateService,
  ) {}

  private readonly voidListeners: ((actor: Actor, invoiceId: number) => Promise<void>)[] = [];
  private readonly sendingChecks: ((invoice: InvoiceDetail, format: EinvoiceFormat, wasDraft: boolean) => void)[] = [];

  /** Runs `listener` after each void commits (the gateway expires the invoice's open checkout); it handles its own errors. */
  whenVoided(listener: (actor: Actor, invoiceId: number) => Promise<void>): void {
    this.voidListeners.push(listener);
  }

  /**
   * `check` runs in `/send`'s transaction for a business that sends an e-invoice with its e-mails,
   * once the invoice is issued: it throws to refuse the invoice (server/einvoice/ knows what each
   * format requires), and then nothing is issued or sent.
   */
  whenSending(check: (invoice: InvoiceDetail, format: EinvoiceFormat, wasDraft: boolean) => void): void {
    this.sendingChecks.push(check);
  }

  async list(actor: Actor, params: InvoiceListParams): Promise<Page<InvoiceView>> {
    const query = Invoice.of(actor, this.db.current);
    if (params.status) query.where('invoices.status', params.status);
    if (params.client_id) query.where('invoices.client_id', params.client_id);
    if (params.overdue !== undefined) whereOverdue(query, params.overdue);
    whereMetadata(query, actor, this.db.current, 'invoice', params.metadata);
    const page = await paginate(query, Invoice.tableName, params, (row) => row);
    const [items, parties, reminders] = await Promise.all([
      itemsOf(page.data, this.db.current),
      partiesOf(actor, page.data, this.db.current),
      InvoiceReminder.ofInvoices(actor, page.data, this.db.current),
    ]);
    return { ...page, data: page.data.map((row) => toInvoiceView(row, items.get(row.id) ?? [], this.links, parties.get(row.id)!, reminders.get(row.id) ?? [])) };
  }

  async get(actor: Actor, id: number): Promise<InvoiceDetail> {
    return invoiceDetail(actor, await this.find(actor, id), this.db.current, this.links);
  }

  async paymentStatus(actor: Actor, id: number) {
    const row = await this.find(actor, id);
    return {
      invoice_id: row.id,
      status: row.status,
      currency: row.currency,
      total: toMajor(row.total, row.currency),
      amount_paid: toMajor(row.amount_paid, row.currency),
      amount_due: toMajor(amountDue(row), row.currency),
      overdue: isOverdue(row, todayUtc()),
    };
  }

  /** A draft, with `invoice.created` in the same transaction. */
  async create(actor: Actor, input: InvoiceInput): Promise<InvoiceDetail> {
    return this.db.transaction(async (trx) => (await this.insert(trx, actor, input, { issued: false })).invoice);
  }

  /** A new invoice issued at once (quick-charge): created numbered and `sent`, with its payment link. */
  async createIssued(actor: Actor, input: InvoiceInput): Promise<IssuedInvoice> {
    return this.db.transaction(async (trx) => {
      const { row, invoice } = await this.insert(trx, actor, input, { issued: true });
      return { invoice, payment_url: this.links.paymentUrl(row.payment_token) };
    });
  }

  /**
   * The invoice of a recurring schedule's date, in the caller's transaction: issued (numbered, `sent`,
   * payment link, `invoice.created`), and with `email` sent as `/send` sends a draft (`invoice.sent`,
   * the e-mail queued and left to the queue's rounds). Its lines keep the rates the schedule was
   * made with, archived since or not.
   */
  async createForSchedule(actor: Actor, input: InvoiceInput, { recurringInvoiceId, email }: { recurringInvoiceId: number; email: boolean }): Promise<InvoiceDetail> {
    return this.db.transaction(async (trx) => {
      if (!email) return (await this.insert(trx, actor, input, { issued: true, forNewLines: false, recurringInvoiceId })).invoice;
      // The number is drawn before the draft's insert, as an issued insert draws it (the business row's
      // lock before the foreign-key checks share it: see insert).
      const number = await drawInvoiceNumber(trx, actor);
      const { row, items, business, client, created } = await this.insert(trx, actor, input, { issued: false, forNewLines: false, recurringInvoiceId, recordCreated: false });
      // No re-pricing, unlike a draft's `issue`: the lines were priced a moment ago in this transaction,
      // for this client (share-locked) and with these rates, so its totals are the ones it would find.
      await row.$query(trx).patch(issuedFields(number, business, client));
      const sent = await this.sendIssued(trx, actor, row, { wasDraft: true, awaitFirstAttempt: false, business, client, known: { items, payments: [], reminders: [] }, recordedBefore: [created] });
      return sent.invoice;
    });
  }

  /** A draft's fields; the metadata of an invoice in any status (it is the caller's, not the client's). */
  async update(actor: Actor, id: number, { metadata: metadataChanges, ...changes }: InvoiceChanges): Promise<InvoiceDetail> {
    return this.db.transaction(async (trx) => {
      const current = await this.lock(trx, actor, id);
      if (metadataChanges) await updateMetadata(trx, actor, 'invoice', current, metadataChanges);
      if (!Object.keys(changes).length) return invoiceDetail(actor, current, trx, this.links);
      if (current.status !== 'draft') throw new InvalidState(`Only a draft invoice can be changed; this one is ${current.status}`);
      const [currentItems, client] = await Promise.all([InvoiceItem.ofInvoice(current, trx), Client.findOwn(actor, trx, current.client_id)]);
      if (!client) throw new NotFound('Client', current.client_id);
      const currency = changes.currency ?? current.currency;
      const errors = new Map<string, string[]>();
      const requestedTaxExempt = changes.tax_exempt === undefined ? current.requested_tax_exempt : changes.tax_exempt;
      const { items: priced, taxes, caller_rounding } = await this.price(trx, actor, {
        items: changes.items ?? itemsAsInput(currentItems, current.currency),
        currency,
        default_tax_rate_ids: changes.default_tax_rate_ids ?? current.default_tax_rate_ids ?? [],
        tax_exempt: requestedTaxExempt ?? client.tax_exempt,
        // A rounding settled for the old lines or currency does not carry over to new ones.
        rounding_amount: changes.rounding_amount ?? (changes.items || changes.currency ? undefined : toMajor(current.caller_rounding_amount, current.currency)),
        // Rates already on the draft stay on it even if archived since; new lines and defaults need active ones.
        forNewLines: changes.items !== undefined || changes.default_tax_rate_ids !== undefined,
        errors,
      });
      const issueDate = changes.issue_date ?? current.issue_date;
      const dueDate = changes.due_date ?? current.due_date;
      this.checkDates(issueDate, dueDate, errors);
      if (errors.size) throw new ValidationFailed(Object.fromEntries(errors));

      const optional = (value: string | null | undefined, was: string | null) => (value === undefined ? was : value || null);
      await current.$query(trx).patch({
        currency,
        issue_date: issueDate,
        due_date: dueDate,
        notes: optional(changes.notes, current.notes),
        buyer_reference: optional(changes.buyer_reference, current.buyer_reference),
        purchase_order: optional(changes.purchase_order, current.purchase_order),
        requested_tax_exempt: requestedTaxExempt,
        default_tax_rate_ids: changes.default_tax_rate_ids ?? current.default_tax_rate_ids ?? [],
        ...totalsOf(taxes, caller_rounding, requestedTaxExempt ?? client.tax_exempt),
      });
      await InvoiceItem.ofInvoices([current], trx).delete();
      const items = await this.insertItems(trx, current, priced);
      return invoiceDetail(actor, current, trx, this.links, { items, clients: [client] });
    });
  }

  async remove(actor: Actor, id: number): Promise<{ id: number; deleted: true }> {
    return this.db.transaction(async (trx) => {
      const current = await this.lock(trx, actor, id);
      if (current.status !== 'draft') throw new InvalidState(`Only a draft invoice can be deleted; this one is ${current.status}`);
      await InvoiceItem.ofInvoices([current], trx).delete();
      await dropMetadataIndex(trx, actor, { type: 'invoice', id });
      await current.$query(trx).delete();
      return { id, deleted: true as const };
    });
  }

  /**
   * Issues a draft (or reminds for an issued invoice) and e-mails the client. The e-mail is written
   * with the change and leaves after the commit (never inside the transaction, so a slow mail
   * server holds no lock or connection); the response waits a few seconds for that first attempt:
   * `sent`, or `queued` when it is retried later. Under a test key nothing is sent: `suppressed`.
   * Work that answers no one (`awaitFirstAttempt: false`, a recurring invoice's sweep) hands the
   * e-mail to the queue's own rounds instead of waiting for it.
   */
  async send(actor: Actor, id: number, { awaitFirstAttempt = true }: { awaitFirstAttempt?: boolean } = {}): Promise<SentInvoice> {
    return this.db.transaction(async (trx) => {
      const row = await this.lock(trx, actor, id);
      if (row.status === 'paid' || row.status === 'void') throw new InvalidState(`A ${row.status} invoice cannot be sent`);
      const wasDraft = row.status === 'draft';
      const issued = wasDraft ? await this.issue(trx, actor, row) : undefined;
      return this.sendIssued(trx, actor, row, { wasDraft, awaitFirstAttempt, business: issued?.business, client: issued?.client, known: { items: issued?.items } });
    });
  }

  /**
   * The sending of an issued invoice that `trx` holds (locked, or just inserted): the sending
   * checks, `invoice.sent` and the e-mail, as `send` describes. The business, the client and
   * `known` are what the caller has read or written in `trx` already, so they are not read again.
   */
  private async sendIssued(
    trx: Knex.Transaction,
    actor: Actor,
    row: Invoice,
    {
      wasDraft,
      awaitFirstAttempt,
      known,
      recordedBefore = [],
      ...read
    }: { wasDraft: boolean; awaitFirstAttempt: boolean; business?: Business; client?: Client; known: KnownOfInvoice; recordedBefore?: NewEvent[] },
  ): Promise<SentInvoice> {
    const invoice = await invoiceDetail(actor, row, trx, this.links, known);
    const business = read.business ?? (await Business.findById(trx, actor.businessId));
    if (!business) throw new NotFound('Business', actor.businessId);
    const format = business.einvoice_format;
    if (format) for (const check of this.sendingChecks) check(invoice, format, wasDraft);
    // With the events the caller left to record first (a new invoice's `invoice.created`): one write of both.
    await this.outbox.recordMany(trx, [...recordedBefore, { actor, type: 'invoice.sent', data: { invoice } }]);

    const client = read.client ?? (await Client.findOwn(actor, trx, row.client_id));
    if (!client) throw new NotFound('Client', row.client_id);
    // The object the caller receives: the first attempt, after the commit, settles its status.
    const email: SentInvoice['email'] = { to: client.email, status: actor.livemode ? 'queued' : 'suppressed' };
    if (!actor.livemode) return { invoice, email };
    const message = await this.emails.enqueue(
      trx,
      actor,
      row.id,
      invoiceEmail({
        ...invoiceEmailFacts(row, { businessName: business.name, clientName: client.name, clientEmail: client.email }, this.links.paymentUrl(row.payment_token)),
        notes: row.notes ?? null,
      }),
    );
    if (!awaitFirstAttempt) {
      this.db.afterCommit(() => this.emails.nudge());
      return { invoice, email };
    }
    this.db.afterCommit(async () => {
      email.status = await this.emails.deliverNow(message.id);
    });
    return { invoice, email };
  }

  /**
   * What `send` answers, read back without sending anything: for a retry of a send whose request
   * died after its commit and before its answer was stored (server/http/idempotency.ts). The e-mail
   * is the invoice's latest, as it is now: `sent`, or `queued` for the sweeps to retry.
   */
  async sentOutcome(actor: Actor, id: number): Promise<SentInvoice> {
    const row = await this.find(actor, id);
    const invoice = await invoiceDetail(actor, row, this.db.current, this.links);
    const client = await Client.of(actor, this.db.current).findById(row.client_id);
    if (!client) throw new NotFound('Client', row.client_id);
    const status = actor.livemode ? await this.emails.latestStatus(actor, id) : 'suppressed';
    return { invoice, email: { to: client.email, status } };
  }

  /** The payment link; a draft is issued by it (numbered, `sent`) without an e-mail or `invoice.sent`. */
  async initiatePayment(actor: Actor, id: number): Promise<{ payment_url: string; invoice_id: number }> {
    return this.db.transaction(async (trx) => {
      const row = await this.lock(trx, actor, id);
      if (row.status === 'paid' || row.status === 'void') throw new InvalidState(`A ${row.status} invoice cannot be paid`);
      if (row.status === 'draft') await this.issue(trx, actor, row);
      return { payment_url: this.links.paymentUrl(row.payment_token), invoice_id: row.id };
    });
  }

  /**
   * Voids a locked invoice outright: a draft, or an issued one with nothing left to credit (a zero
   * total). Any other issued invoice is voided by the credit note that cancels it (credit-notes/).
   * A voided draft still takes its number: the sequence has no gaps.
   */
  async voidLocked(trx: Knex.Transaction, actor: Actor, row: Invoice): Promise<InvoiceDetail> {
    const number = row.number ?? (await drawInvoiceNumber(trx, actor));
    // A voided draft leaves draft too: it keeps who it was from and to, as an issued one does.
    const parties = row.status === 'draft' ? (await partiesOf(actor, [row], trx)).get(row.id) : undefined;
    await row.$query(trx).patch({ status: 'void', number, voided_at: businessClock.now().toISOString(), ...parties });
    this.afterVoid(actor, row.id);
    return invoiceDetail(actor, row, trx, this.links);
  }

  /** Runs the void listeners once the current transaction commits (never inside it: they call the payment gateway). */
  afterVoid(actor: Actor, id: number): void {
    for (const listener of this.voidListeners) this.db.afterCommit(() => listener(actor, id));
  }

  /**
   * The client opens the payment link. The first view of an issued, unpaid invoice sets
   * `viewed_at` and fires `invoice.viewed`; a `sent` invoice becomes `viewed` (a `partial` one
   * keeps its status: views never move an invoice backwards). The 256-bit token is the capability,
   * so the lookup is the one read across tenants; drafts are never shown.
   */
  async openPaymentPage(token: string, { markViewed }: { markViewed: boolean }): Promise<{ invoice: InvoiceDetail; businessName: string; businessId: number } | null> {
    return this.db.transaction(async (trx) => {
      const row = await this.byPaymentToken(trx, token);
      if (!row) return null;
      const actor = paymentPageActor(row);
      if (markViewed && !row.viewed_at && (row.status === 'sent' || row.status === 'partial')) {
        const changes = { viewed_at: businessClock.now().toISOString(), ...(row.status === 'sent' ? { status: 'viewed' as const } : {}) };
        // An instance patch updates `row` too, `updated_at` included.
        await row.$query(trx).patch(changes);
        await this.outbox.record(trx, actor, 'invoice.viewed', { invoice: await invoiceDetail(actor, row, trx, this.links) });
      }
      const business = await this.businesses.get(row.business_id);
      return { invoice: await invoiceDetail(actor, row, trx, this.links), businessName: business.name, businessId: row.business_id };
    });
  }

  /** The invoice a payment link names and the actor its page acts as; null for an unknown or malformed token, or a draft. */
  async payableThroughLink(token: string): Promise<{ actor: SystemActor; invoiceId: number } | null> {
    const row = await this.byPaymentToken(this.db.current, token);
    return row ? { actor: paymentPageActor(row), invoiceId: row.id } : null;
  }

  /** The one read across tenants: the 256-bit token is the capability. Locks the row inside a transaction. */
  private async byPaymentToken(conn: Knex, token: string): Promise<Invoice | null> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
    const query = Invoice.acrossTenants(acrossTenants('payment page token lookup'), conn).where('payment_token', token).first();
    const row = await (conn.isTransaction ? query.forUpdate() : query);
    return row && row.status !== 'draft' ? row : null;
  }

  /**
   * Inserts the invoice, its items and `invoice.created` (or, `recordCreated: false`, leaves the
   * event to the caller, to record with the next in one go). An `issued` invoice draws its number
   * before its first insert, so the business row's lock is taken before any foreign-key check
   * shares it (taking it after would be a lock upgrade, which deadlocks two concurrent issuers).
   */
  private async insert(
    trx: Knex.Transaction,
    actor: Actor,
    input: InvoiceInput,
    { issued, forNewLines = true, recurringInvoiceId, recordCreated = true }: { issued: boolean; forNewLines?: boolean; recurringInvoiceId?: number; recordCreated?: boolean },
  ): Promise<{ row: Invoice; invoice: InvoiceDetail; items: InvoiceItem[]; business: Business; client: Client; created: NewEvent }> {
    const errors = new Map<string, string[]>();
    // A shared lock: a concurrent delete of the client waits for this invoice, then the foreign key refuses it.
    const [client, business] = await Promise.all([Client.findOwn(actor, trx, input.client_id, { lock: 'share' }), Business.findById(trx, actor.businessId)]);
    if (!business) throw new NotFound('Business', actor.businessId);
    if (!client) errors.set('client_id', [UNKNOWN_CLIENT_ID]);
    const currency = input.currency ?? business.currency;
    const taxExempt = input.tax_exempt ?? client?.tax_exempt ?? 'none';
    const { items: priced, taxes, caller_rounding } = await this.price(trx, actor, {
      items: input.items,
      currency,
      default_tax_rate_ids: input.default_tax_rate_ids ?? [],
      tax_exempt: taxExempt,
      rounding_amount: input.rounding_amount,
      forNewLines,
      errors,
    });
    const issueDate = input.issue_date ?? todayUtc();
    const dueDate = input.due_date ?? addDays(issueDate, DEFAULT_TERM_DAYS);
    this.checkDates(issueDate, dueDate, errors);
    if (errors.size || !client) throw new ValidationFailed(Object.fromEntries(errors));

    const metadata = initialMetadata(input.metadata);
    const row = await Invoice.create(actor, trx, {
      client_id: input.client_id,
      ...(issued ? issuedFields(await drawInvoiceNumber(trx, actor), business, client) : { number: null, status: 'draft' as const, seller: null, buyer: null }),
      currency,
      issue_date: issueDate,
      due_date: dueDate,
      ...totalsOf(taxes, caller_rounding, taxExempt),
      requested_tax_exempt: input.tax_exempt ?? null,
      default_tax_rate_ids: input.default_tax_rate_ids ?? [],
      amount_paid: 0,
      amount_credited: 0,
      credit_note_ids: null,
      notes: input.notes || null,
      buyer_reference: input.buyer_reference === undefined ? client.buyer_reference : input.buyer_reference || null,
      purchase_order: input.purchase_order || null,
      payment_token: randomBytes(32).toString('base64url'),
      metadata,
      ...(recurringInvoiceId ? { recurring_invoice_id: recurringInvoiceId } : {}),
    });
    await indexMetadata(trx, actor, { type: 'invoice', id: row.id }, metadata, { replace: false });
    const items = await this.insertItems(trx, row, priced);
    const invoice = await invoiceDetail(actor, row, trx, this.links, { payments: [], reminders: [], items, business, clients: [client] });
    const created: NewEvent = { actor, type: 'invoice.created', data: { invoice } };
    if (recordCreated) await this.outbox.recordMany(trx, [created]);
    return { row, invoice, items, business, client, created };
  }

  /**
   * Prices lines and their taxes (invoices/pricing.ts, with the one tax engine): reads the terms of
   * every rate the lines use, in one query; an unknown rate (or, for new lines, an archived one) is
   * a 422 naming the fields it came from.
   */
  private async price(
    trx: Knex.Transaction,
    actor: Actor,
    { items, forNewLines, errors, ...terms }: TaxTerms & { items: ItemInput[]; forNewLines: boolean; errors: Map<string, string[]> },
  ): Promise<PricedInvoice> {
    const { ids, fieldsOf } = rateIdsOf(items, terms.default_tax_rate_ids);
    const rates = await this.taxRates.termsFor(actor, trx, ids, { forNewLines, fieldsOf });
    return priceInvoice(items, terms, rates, errors);
  }

  /**
   * Draft → sent: draws the number and takes the snapshot of both parties. The taxes are computed
   * again from the snapshot: the buyer's tax status is the client's as it is now (unless the invoice
   * overrides it), and each rate's name as it is now is the one the invoice keeps. Mutates `row` so
   * the caller sees the issued invoice; resolves with the business, client and lines it read.
   */
  private async issue(trx: Knex.Transaction, actor: Actor, row: Invoice): Promise<{ business: Business; client: Client; items: InvoiceItem[] }> {
    const number = await drawInvoiceNumber(trx, actor);
    const [client, business] = await Promise.all([Client.findOwn(actor, trx, row.client_id), Business.findById(trx, actor.businessId)]);
    if (!client || !business) throw new NotFound(client ? 'Business' : 'Client');
    const errors = new Map<string, string[]>();
    const repriced = await this.repriced(trx, actor, row, row.requested_tax_exempt ?? client.tax_exempt, errors);
    if (!repriced) throw new ValidationFailed(Object.fromEntries(errors));
    await row.$query(trx).patch({ ...issuedFields(number, business, client), ...repriced.totals });
    return { business, client, items: repriced.items };
  }

  /**
   * A client's tax status changed (in the caller's transaction): its drafts that do not set their own
   * are priced again, so that a draft shows the taxes it would be issued with. One whose lines carry
   * a shop's tax that the new status refuses keeps its figures; issuing it says why.
   */
  async repriceDraftsOf(trx: Knex.Transaction, actor: Actor, client: { id: number; tax_exempt: TaxExempt }): Promise<void> {
    const drafts = await Invoice.of(actor, trx).where({ 'invoices.client_id': client.id, 'invoices.status': 'draft' }).whereNull('invoices.requested_tax_exempt').forUpdate();
    for (const row of drafts) {
      const repriced = await this.repriced(trx, actor, row, client.tax_exempt, new Map());
      if (repriced) await row.$query(trx).patch(repriced.totals);
    }
  }

  /**
   * The invoice's lines and taxes priced again as they stand, for a buyer of tax status `taxExempt`
   * and with the rates as they are now: the totals to store, and the lines (as stored now: those
   * whose amount excluding tax changed are updated). Null, with nothing written, when they cannot
   * be priced so (the problems are recorded in `errors`).
   */
  private async repriced(
    trx: Knex.Transaction,
    actor: Actor,
    row: Invoice,
    taxExempt: TaxExempt,
    errors: Map<string, string[]>,
  ): Promise<{ totals: InvoiceTotals; items: InvoiceItem[] } | null> {
    const items = await InvoiceItem.ofInvoice(row, trx);
    const { taxes, caller_rounding } = await this.price(trx, actor, {
      items: itemsAsInput(items, row.currency),
      currency: row.currency,
      default_tax_rate_ids: row.default_tax_rate_ids ?? [],
      tax_exempt: taxExempt,
      rounding_amount: toMajor(row.caller_rounding_amount, row.currency),
      forNewLines: false,
      errors,
    });
    if (errors.size) return null;
    // A buyer whose tax status changed since the lines were priced changes their amounts excluding tax.
    for (const [index, line] of taxes.lines.entries()) {
      if (line.amount_excluding_tax !== items[index].amount_excluding_tax) {
        await InvoiceItem.ofInvoices([row], trx).where('invoice_items.id', items[index].id).patch({ amount_excluding_tax: line.amount_excluding_tax });
        items[index].amount_excluding_tax = line.amount_excluding_tax;
      }
    }
    return { totals: totalsOf(taxes, caller_rounding, taxExempt), items };
  }

  private checkDates(issueDate: string, dueDate: string, errors: Map<string, string[]>): void {
    // Calendar dates in one format compare correctly as text.
    if (dueDate <= issueDate) errors.set('due_date', [`must be after the issue date (${issueDate})`]);
  }

  private insertItems(trx: Knex.Transaction, invoice: Invoice, priced: PricedItem[]): Promise<InvoiceItem[]> {
    // JSON columns travel as text in a fixed statement.
    return InvoiceItem.insertFor(
      invoice,
      trx,
      priced.map((item) => ({
        ...item,
        tax_rate_ids: item.tax_rate_ids && JSON.stringify(item.tax_rate_ids),
        tax_amounts: item.tax_amounts && JSON.stringify(item.tax_amounts),
      })),
    );
  }

  private async find(actor: Actor, id: number, conn: Knex = this.db.current): Promise<Invoice> {
    const row = await Invoice.findOwn(actor, conn, id);
    if (!row) throw new NotFound('Invoice', id);
    return row;
  }

  /** Reads the invoice for a change, locking its row until commit (no lock on SQLite, whose one writer needs none: see lockClause). */
  private async lock(trx: Knex.Transaction, actor: Actor, id: number): Promise<Invoice> {
    const row = await Invoice.findOwn(actor, trx, id, { lock: 'update' });
    if (!row) throw new NotFound('Invoice', id);
    return row;
  }
}

type InvoiceTotals = ReturnType<typeof totalsOf>;

/** The columns an invoice takes as it leaves draft: its number, `sent` now, and the snapshot of both parties as they are. */
function issuedFields(number: string, business: Business, client: Client) {
  return {
    number,
    status: 'sent' as const,
    sent_at: businessClock.now().toISOString(),
    seller: toSellerSnapshot(business),
    buyer: toBuyerSnapshot(client),
  };
}

/** The invoice columns the taxes set. */
function totalsOf(taxes: TaxedInvoice, callerRounding: number, taxExempt: TaxExempt) {
  return {
    subtotal: taxes.subtotal,
    total_excluding_tax: taxes.total_excluding_tax,
    total_tax: taxes.total_tax,
    rounding_amount: taxes.rounding_amount,
    caller_rounding_amount: callerRounding,
    total: taxes.total,
    tax_exempt: taxExempt,
    tax_breakdown: taxes.tax_breakdown,
  };
}

function paymentPageActor(row: Invoice): SystemActor {
  return systemActor('payment page', { businessId: row.business_id, livemode: row.livemode });
}
