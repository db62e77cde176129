/**
 * Invoices: drafts with line items, issuing with gapless numbers, e-mail, payments, and the
 * events of each change written in the change's own transaction.
 */
import { randomBytes } from 'node:crypto';
import { Knex } from 'knex';
import { Credential, Tenancy } from '../auth/credential';
import { BusinessService } from '../businesses/service';
import { Client } from '../clients/model';
import { UNKNOWN_CLIENT_ID } from '../clients/service';
import { Database } from '../db/database';
import { Mailer } from '../email/mailer';
import { AppError, InvalidState, NotFound, ValidationFailed } from '../errors';
import { Outbox } from '../events/outbox';
import { Page, paginate } from '../http/pagination';
import { collectMinor, fromQuantityUnits, lineAmount, MAX_MINOR_AMOUNT, toMajor, toQuantityUnits, AmountProblem } from '../money/amount';
import { Payment } from '../payments/model';
import { PaymentService, PaymentView, toPaymentView } from '../payments/service';
import { addDays, todayUtc } from '../validation';
import { formatMoney, invoiceEmail } from './email';
import { Invoice, InvoiceItem, InvoiceStatus } from './model';
import { drawInvoiceNumber } from './numbering';
import { InvoiceChanges, InvoiceInput, InvoiceListParams, ItemInput } from './schema';

export interface InvoiceItemView {
  id: number;
  description: string;
  quantity: number;
  unit_price: number;
  amount: number;
}

export interface InvoiceView {
  id: number;
  number: string | null;
  client_id: number;
  status: InvoiceStatus;
  currency: string;
  issue_date: string;
  due_date: string;
  items: InvoiceItemView[];
  subtotal: number;
  total: number;
  amount_paid: number;
  amount_due: number;
  notes: string | null;
  livemode: boolean;
  sent_at: string | null;
  viewed_at: string | null;
  paid_at: string | null;
  voided_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A single invoice as every single-invoice response and event shows it: with its payment history. */
export interface InvoiceDetail extends InvoiceView {
  payments: PaymentView[];
}

export interface SentInvoice {
  invoice: InvoiceDetail;
  email: { to: string; status: 'sent' | 'written' | 'suppressed' };
}

export interface IssuedInvoice {
  invoice: InvoiceDetail;
  payment_url: string;
}

/** 403 for a test-mode-only action under a live key. */
export class TestModeOnly extends AppError {
  constructor() {
    super(403, 'test_mode_only', 'Payments can be simulated only with a test key (svc_test_…)');
  }
}

const DEFAULT_TERM_DAYS = 30;
/** Where payments move a sent invoice; a draft, paid or void invoice takes none. */
const PAYABLE: readonly InvoiceStatus[] = ['sent', 'viewed', 'partial'];

interface PricedItem {
  position: number;
  description: string;
  quantity_units: number;
  unit_price: number;
  amount: number;
}

function toItemView(row: InvoiceItem, currency: string): InvoiceItemView {
  return {
    id: row.id,
    description: row.description,
    quantity: fromQuantityUnits(row.quantity_units),
    unit_price: toMajor(row.unit_price, currency),
    amount: toMajor(row.amount, currency),
  };
}

function toInvoiceView(row: Invoice, items: InvoiceItem[]): InvoiceView {
  const money = (minor: number) => toMajor(minor, row.currency);
  return {
    id: row.id,
    number: row.number ?? null,
    client_id: row.client_id,
    status: row.status,
    currency: row.currency,
    issue_date: row.issue_date,
    due_date: row.due_date,
    items: items.map((item) => toItemView(item, row.currency)),
    subtotal: money(row.subtotal),
    total: money(row.total),
    amount_paid: money(row.amount_paid),
    amount_due: money(row.total - row.amount_paid),
    notes: row.notes ?? null,
    livemode: row.livemode,
    sent_at: row.sent_at ?? null,
    viewed_at: row.viewed_at ?? null,
    paid_at: row.paid_at ?? null,
    voided_at: row.voided_at ?? null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/**
 * Prices the items in `currency`: every amount in minor units, each line rounded half away from
 * zero. Problems are recorded per field (`items.2.unit_price`) so one 422 names them all.
 */
function priceItems(items: ItemInput[], currency: string, errors: Map<string, string[]>): { priced: PricedItem[]; total: number } {
  const priced: PricedItem[] = [];
  let total = 0;
  items.forEach((item, index) => {
    const unitPrice = collectMinor(errors, `items.${index}.unit_price`, item.unit_price, currency);
    let quantityUnits = 0;
    let amount = 0;
    try {
      quantityUnits = toQuantityUnits(item.quantity);
      amount = lineAmount(quantityUnits, unitPrice);
    } catch (err) {
      if (!(err instanceof AmountProblem)) throw err;
      errors.set(`items.${index}.quantity`, [err.message]);
    }
    total += amount;
    priced.push({ position: index + 1, description: item.description, quantity_units: quantityUnits, unit_price: unitPrice, amount });
  });
  if (total < 0) errors.set('items', ['the invoice total must not be negative: discount lines may not exceed the other lines']);
  if (total > MAX_MINOR_AMOUNT) errors.set('items', ['the invoice total is too large']);
  return { priced, total };
}

/** The items of an existing invoice as input again, to re-price them (e.g. in another currency). */
function itemsAsInput(items: InvoiceItem[], currency: string): ItemInput[] {
  return items.map((item) => ({
    description: item.description,
    quantity: fromQuantityUnits(item.quantity_units),
    unit_price: toMajor(item.unit_price, currency),
  }));
}

export class InvoiceService {
  constructor(
    private readonly db: Database,
    private readonly businesses: BusinessService,
    private readonly payments: PaymentService,
    private readonly mailer: Mailer,
    private readonly outbox: Outbox,
    private readonly options: { baseUrl: string },
  ) {}

  async list(cred: Credential, params: InvoiceListParams): Promise<Page<InvoiceView>> {
    const query = Invoice.scoped(cred, this.db.current);
    if (params.status) query.where('invoices.status', params.status);
    if (params.client_id) query.where('invoices.client_id', params.client_id);
    const page = await paginate(query, Invoice.tableName, params, (row) => row);
    const items = await this.itemsOf(page.data.map((row) => row.id));
    return { ...page, data: page.data.map((row) => toInvoiceView(row, items.get(row.id) ?? [])) };
  }

  async get(cred: Credential, id: number): Promise<InvoiceDetail> {
    return this.detail(cred, await this.find(cred, id));
  }

  async paymentStatus(cred: Credential, id: number) {
    const row = await this.find(cred, id);
    return {
      invoice_id: row.id,
      status: row.status,
      currency: row.currency,
      total: toMajor(row.total, row.currency),
      amount_paid: toMajor(row.amount_paid, row.currency),
      amount_due: toMajor(row.total - row.amount_paid, row.currency),
    };
  }

  /** A draft, with `invoice.created` in the same transaction. */
  async create(cred: Credential, input: InvoiceInput): Promise<InvoiceDetail> {
    return this.db.transaction(async (trx) => (await this.insert(trx, cred, input, { issued: false })).invoice);
  }

  /** A new invoice issued at once (quick-charge): created numbered and `sent`, with its payment link. */
  async createIssued(cred: Credential, input: InvoiceInput): Promise<IssuedInvoice> {
    return this.db.transaction(async (trx) => {
      const { row, invoice } = await this.insert(trx, cred, input, { issued: true });
      return { invoice, payment_url: this.paymentUrl(row) };
    });
  }

  async update(cred: Credential, id: number, changes: InvoiceChanges): Promise<InvoiceDetail> {
    return this.db.transaction(async (trx) => {
      const current = await this.lock(trx, cred, id);
      if (current.status !== 'draft') throw new InvalidState(`Only a draft invoice can be changed; this one is ${current.status}`);
      const currentItems = (await this.itemsOf([id], trx)).get(id) ?? [];
      const currency = changes.currency ?? current.currency;
      const errors = new Map<string, string[]>();
      const { priced, total } = priceItems(changes.items ?? itemsAsInput(currentItems, current.currency), currency, errors);
      const issueDate = changes.issue_date ?? current.issue_date;
      const dueDate = changes.due_date ?? current.due_date;
      this.checkDates(issueDate, dueDate, errors);
      if (errors.size) throw new ValidationFailed(Object.fromEntries(errors));

      const notes = changes.notes === undefined ? current.notes : changes.notes || null;
      await Invoice.query(trx)
        .findById(id)
        .patch({ currency, issue_date: issueDate, due_date: dueDate, notes, subtotal: total, total });
      await trx(InvoiceItem.tableName).where('invoice_id', id).delete();
      await this.insertItems(trx, id, priced);
      return this.detail(cred, await this.find(cred, id, trx), trx);
    });
  }

  async remove(cred: Credential, id: number): Promise<{ id: number; deleted: true }> {
    return this.db.transaction(async (trx) => {
      const current = await this.lock(trx, cred, id);
      if (current.status !== 'draft') throw new InvalidState(`Only a draft invoice can be deleted; this one is ${current.status}`);
      await trx(InvoiceItem.tableName).where('invoice_id', id).delete();
      await Invoice.query(trx).deleteById(id);
      return { id, deleted: true as const };
    });
  }

  /**
   * Issues a draft (or reminds for an issued invoice) and e-mails the client. The e-mail goes last,
   * inside the transaction: if the SMTP server refuses it, the number, the status and the
   * `invoice.sent` event roll back and the invoice is as it was. Under a test key nothing is sent.
   */
  async send(cred: Credential, id: number): Promise<SentInvoice> {
    return this.db.transaction(async (trx) => {
      const row = await this.lock(trx, cred, id);
      if (row.status === 'paid' || row.status === 'void') throw new InvalidState(`A ${row.status} invoice cannot be sent`);
      if (row.status === 'draft') await this.issue(trx, cred, row);
      const invoice = await this.detail(cred, row, trx);
      await this.outbox.record(trx, cred, 'invoice.sent', { invoice });

      const client = await Client.scoped(cred, trx).findById(row.client_id);
      if (!client) throw new NotFound('Client');
      if (!cred.livemode) return { invoice, email: { to: client.email, status: 'suppressed' as const } };
      const business = await this.businesses.ofCredential(cred);
      const delivery = await this.mailer.send(
        invoiceEmail({
          businessName: business.name,
          clientName: client.name,
          clientEmail: client.email,
          number: row.number ?? '',
          // A reminder for a partly paid invoice asks for what is left.
          amountDue: formatMoney(row.total - row.amount_paid, row.currency),
          dueDate: row.due_date,
          paymentUrl: this.paymentUrl(row),
          notes: row.notes ?? null,
        }),
      );
      return { invoice, email: { to: client.email, status: delivery.status } };
    });
  }

  /** The payment link; a draft is issued by it (numbered, `sent`) without an e-mail or `invoice.sent`. */
  async initiatePayment(cred: Credential, id: number): Promise<{ payment_url: string; invoice_id: number }> {
    return this.db.transaction(async (trx) => {
      const row = await this.lock(trx, cred, id);
      if (row.status === 'paid' || row.status === 'void') throw new InvalidState(`A ${row.status} invoice cannot be paid`);
      if (row.status === 'draft') await this.issue(trx, cred, row);
      return { payment_url: this.paymentUrl(row), invoice_id: row.id };
    });
  }

  /**
   * Test mode: records a succeeded payment (default: the amount due) and fires `payment.received`,
   * and `invoice.paid` when it settles the invoice. The invoice row is locked for the whole
   * transaction, so concurrent payments queue and can never over-pay or lose an update.
   */
  async simulatePayment(cred: Credential, id: number, amount?: number): Promise<{ payment: PaymentView; invoice: InvoiceDetail }> {
    if (cred.livemode) throw new TestModeOnly();
    return this.db.transaction(async (trx) => {
      const row = await this.lock(trx, cred, id);
      if (!PAYABLE.includes(row.status)) throw new InvalidState(`A ${row.status} invoice cannot be paid`);
      const due = row.total - row.amount_paid;
      if (due <= 0) throw new InvalidState('Nothing is due on this invoice');
      const errors = new Map<string, string[]>();
      const minor = amount === undefined ? due : collectMinor(errors, 'amount', amount, row.currency);
      if (minor > due) errors.set('amount', [`must not exceed the amount due (${toMajor(due, row.currency)} ${row.currency})`]);
      if (errors.size) throw new ValidationFailed(Object.fromEntries(errors));

      const now = new Date().toISOString();
      const payment = await Payment.query(trx).insert({
        ...Payment.ownedBy(cred),
        invoice_id: row.id,
        client_id: row.client_id,
        amount: minor,
        currency: row.currency,
        status: 'succeeded',
        method: 'simulated',
        gateway: 'test',
        gateway_reference: `sim_${randomBytes(12).toString('hex')}`,
        paid_at: now,
      });
      const settled = minor === due;
      await Invoice.query(trx)
        .findById(row.id)
        .patch({ amount_paid: row.amount_paid + minor, status: settled ? 'paid' : 'partial', ...(settled ? { paid_at: now } : {}) });

      const invoice = await this.detail(cred, await this.find(cred, row.id, trx), trx);
      const paymentView = toPaymentView(payment);
      await this.outbox.record(trx, cred, 'payment.received', { payment: paymentView, invoice });
      if (settled) await this.outbox.record(trx, cred, 'invoice.paid', { invoice });
      return { payment: paymentView, invoice };
    });
  }

  /** Cancels an invoice that is not paid. A voided draft still takes its number: the sequence has no gaps. */
  async void(cred: Credential, id: number): Promise<InvoiceDetail> {
    return this.db.transaction(async (trx) => {
      const row = await this.lock(trx, cred, id);
      if (row.status === 'paid' || row.status === 'void') throw new InvalidState(`A ${row.status} invoice cannot be voided`);
      const number = row.number ?? (await drawInvoiceNumber(trx, cred));
      await Invoice.query(trx).findById(id).patch({ status: 'void', number, voided_at: new Date().toISOString() });
      return this.detail(cred, await this.find(cred, id, trx), trx);
    });
  }

  /**
   * The client opens the payment link. The first view of an issued, unpaid invoice sets
   * `viewed_at` and fires `invoice.viewed`; a `sent` invoice becomes `viewed` (a `partial` one
   * keeps its status: views never move an invoice backwards). The 256-bit token is the capability,
   * so this is the one read not scoped by a credential; drafts are never shown.
   */
  async openPaymentPage(token: string, { markViewed }: { markViewed: boolean }): Promise<{ invoice: InvoiceDetail; businessName: string } | null> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
    return this.db.transaction(async (trx) => {
      const row = await Invoice.query(trx).where('payment_token', token).first().forUpdate();
      if (!row || row.status === 'draft') return null;
      const tenancy = { businessId: row.business_id, livemode: row.livemode };
      if (markViewed && !row.viewed_at && (row.status === 'sent' || row.status === 'partial')) {
        const changes = { viewed_at: new Date().toISOString(), ...(row.status === 'sent' ? { status: 'viewed' as const } : {}) };
        // An instance patch updates `row` too, `updated_at` included.
        await row.$query(trx).patch(changes);
        await this.outbox.record(trx, tenancy, 'invoice.viewed', { invoice: await this.detail(tenancy, row, trx) });
      }
      const business = await this.businesses.get(row.business_id);
      return { invoice: await this.detail(tenancy, row, trx), businessName: business.name };
    });
  }

  private paymentUrl(row: Invoice): string {
    return `${this.options.baseUrl}/pay/${row.payment_token}`;
  }

  /**
   * Inserts the invoice, its items and `invoice.created`. An `issued` invoice draws its number
   * before its first insert, so the business row's lock is taken before any foreign-key check
   * shares it (taking it after would be a lock upgrade, which deadlocks two concurrent issuers).
   */
  private async insert(
    trx: Knex.Transaction,
    cred: Credential,
    input: InvoiceInput,
    { issued }: { issued: boolean },
  ): Promise<{ row: Invoice; invoice: InvoiceDetail }> {
    const errors = new Map<string, string[]>();
    // A shared lock: a concurrent delete of the client waits for this invoice, then the foreign key refuses it.
    const client = await Client.scoped(cred, trx).findById(input.client_id).forShare();
    if (!client) errors.set('client_id', [UNKNOWN_CLIENT_ID]);
    const currency = input.currency ?? (await this.businesses.ofCredential(cred)).currency;
    const { priced, total } = priceItems(input.items, currency, errors);
    const issueDate = input.issue_date ?? todayUtc();
    const dueDate = input.due_date ?? addDays(issueDate, DEFAULT_TERM_DAYS);
    this.checkDates(issueDate, dueDate, errors);
    if (errors.size) throw new ValidationFailed(Object.fromEntries(errors));

    const row = await Invoice.query(trx).insert({
      ...Invoice.ownedBy(cred),
      client_id: input.client_id,
      ...(issued
        ? { number: await drawInvoiceNumber(trx, cred), status: 'sent' as const, sent_at: new Date().toISOString() }
        : { number: null, status: 'draft' as const }),
      currency,
      issue_date: issueDate,
      due_date: dueDate,
      subtotal: total,
      total,
      amount_paid: 0,
      notes: input.notes || null,
      payment_token: randomBytes(32).toString('base64url'),
    });
    await this.insertItems(trx, row.id, priced);
    const invoice = await this.detail(cred, row, trx, { payments: [] });
    await this.outbox.record(trx, cred, 'invoice.created', { invoice });
    return { row, invoice };
  }

  /** Draft → sent: draws the number. Mutates `row` so the caller sees the issued invoice. */
  private async issue(trx: Knex.Transaction, cred: Credential, row: Invoice): Promise<void> {
    await row.$query(trx).patch({ status: 'sent', number: await drawInvoiceNumber(trx, cred), sent_at: new Date().toISOString() });
  }

  private checkDates(issueDate: string, dueDate: string, errors: Map<string, string[]>): void {
    // Calendar dates in one format compare correctly as text.
    if (dueDate <= issueDate) errors.set('due_date', [`must be after the issue date (${issueDate})`]);
  }

  private async insertItems(trx: Knex.Transaction, invoiceId: number, priced: PricedItem[]): Promise<void> {
    // One multi-row INSERT (Objection batches inserts only on PostgreSQL).
    await trx(InvoiceItem.tableName).insert(priced.map((item) => ({ invoice_id: invoiceId, ...item })));
  }

  private async itemsOf(invoiceIds: number[], conn: Knex = this.db.current): Promise<Map<number, InvoiceItem[]>> {
    const byInvoice = new Map<number, InvoiceItem[]>();
    if (!invoiceIds.length) return byInvoice;
    const rows = await InvoiceItem.query(conn).whereIn('invoice_id', invoiceIds).orderBy(['invoice_id', 'position']);
    for (const item of rows) byInvoice.set(item.invoice_id, [...(byInvoice.get(item.invoice_id) ?? []), item]);
    return byInvoice;
  }

  /** `known.payments`: a new invoice has none, so the query is spared. */
  private async detail(cred: Tenancy, row: Invoice, conn: Knex = this.db.current, known: { payments?: PaymentView[] } = {}): Promise<InvoiceDetail> {
    const [items, payments] = await Promise.all([
      this.itemsOf([row.id], conn),
      known.payments ?? this.payments.ofInvoice(cred, row.id, conn),
    ]);
    return { ...toInvoiceView(row, items.get(row.id) ?? []), payments };
  }

  private async find(cred: Credential, id: number, conn: Knex = this.db.current): Promise<Invoice> {
    const row = await Invoice.scoped(cred, conn).findById(id);
    if (!row) throw new NotFound('Invoice');
    return row;
  }

  /** Reads the invoice for a change, locking its row until commit (knex drops locking clauses on SQLite, whose one writer needs none). */
  private async lock(trx: Knex.Transaction, cred: Credential, id: number): Promise<Invoice> {
    const row = await Invoice.scoped(cred, trx).findById(id).forUpdate();
    if (!row) throw new NotFound('Invoice');
    return row;
  }
}
