/**
 * Expenses of a business: amounts in the currency's minor units, filtered by category and date; and
 * expenses imported from received e-invoices, one per document.
 */
import os from 'node:os';
import { Knex } from 'knex';
import { Actor, systemActor } from '../auth/actor';
import { BusinessService } from '../businesses/service';
import { Database } from '../db/database';
import { isUniqueViolation } from '../db/errors';
import { DatabaseBusy, NotFound, ValidationFailed } from '../errors';
import type { RawDocument } from '../http/document-body';
import { Page, paginate } from '../http/pagination';
import { collectMinor } from '../money/amount';
import { blankToNull } from '../validation';
import { DocumentReader } from './document-reader';
import { ImportedExpense, importedExpense } from './import';
import { Expense } from './model';
import { MAX_DOCUMENT_BYTES } from './received-document';
import { DuplicateDocument, ExpenseInput, ExpenseListParams, ExpenseView, InvalidDocument } from './schema';
import { toExpenseView } from './view';

/** Threads reading imported documents: half the CPUs, at least one. */
const READER_THREADS = Math.max(1, Math.floor(os.availableParallelism() / 2));
/** How long one imported document may take to read. */
const READ_TIMEOUT_MS = 10_000;

/**
 * The stored columns of a whole expense; the amount's decimals must suit its currency (422
 * otherwise). An imported expense's tax keeps its major units when the currency changes, as the
 * amount does, and is checked alike.
 */
function columnsFor(merged: ExpenseInput & { currency: string; tax_amount?: number | null }): Partial<Expense> {
  const errors = new Map<string, string[]>();
  const amount = collectMinor(errors, 'amount', merged.amount, merged.currency);
  const taxAmount = merged.tax_amount === undefined || merged.tax_amount === null ? null : collectMinor(errors, 'tax_amount', merged.tax_amount, merged.currency);
  if (errors.size) throw new ValidationFailed(Object.fromEntries(errors));
  return {
    amount,
    ...(merged.tax_amount === undefined ? {} : { tax_amount: taxAmount }),
    currency: merged.currency,
    category: merged.category,
    date: merged.date,
    description: blankToNull(merged.description),
    vendor: blankToNull(merged.vendor),
    notes: blankToNull(merged.notes),
  };
}

export class ExpenseService {
  private readonly reader: DocumentReader;

  constructor(
    private readonly db: Database,
    private readonly businesses: BusinessService,
  ) {
    this.reader = new DocumentReader({ threads: READER_THREADS, timeoutMs: READ_TIMEOUT_MS, maxXmlBytes: MAX_DOCUMENT_BYTES });
  }

  list(actor: Actor, params: ExpenseListParams): Promise<Page<ExpenseView>> {
    const query = Expense.of(actor, this.db.current);
    if (params.category) query.where('expenses.category', params.category);
    if (params.date_from) query.where('expenses.date', '>=', params.date_from);
    if (params.date_to) query.where('expenses.date', '<=', params.date_to);
    return paginate(query, Expense.tableName, params, toExpenseView);
  }

  async get(actor: Actor, id: number): Promise<ExpenseView> {
    return toExpenseView(await this.find(actor, id));
  }

  /** Without a currency, the expense is in the business's own currency. */
  async create(actor: Actor, input: ExpenseInput): Promise<ExpenseView> {
    const currency = input.currency ?? (await this.businesses.ofCredential(actor)).currency;
    const row = await Expense.of(actor, this.db.current).insert({ ...columnsFor({ ...input, currency }), ...Expense.ownedBy(actor) });
    return toExpenseView(row);
  }

  /** A changed currency alone keeps the amount in major units (12 USD → 12 EUR), checked against the new currency. */
  async update(actor: Actor, id: number, changes: Partial<ExpenseInput>): Promise<ExpenseView> {
    return this.db.transaction(async (trx) => {
      const current = toExpenseView(await this.find(actor, id, trx));
      await Expense.of(actor, trx).findById(id).patch(columnsFor({ ...current, ...changes }));
      return toExpenseView(await this.find(actor, id, trx));
    });
  }

  /**
   * `POST /expenses/import`: the expense a received UBL, CII or Factur-X invoice describes. The
   * document is read on a worker thread before any transaction begins; the insert meets the unique
   * document key, so the same document imported twice, even at once, is one expense (409 naming it).
   */
  async import(actor: Actor, document: RawDocument, category: string): Promise<ExpenseView> {
    if (document.bytes.length === 0) throw new InvalidDocument('The body is empty: send the e-invoice itself (UBL or CII as application/xml, Factur-X as application/pdf)');
    const invoice = await this.reader.read(document.mediaType, document.bytes);
    const columns = importedExpense(invoice, category);
    return this.db.transaction(async (trx) => {
      await this.refuseDuplicate(actor, trx, columns);
      for (let attempt = 1; ; attempt += 1) {
        try {
          return toExpenseView(await Expense.of(actor, trx).insert({ ...columns, notes: null, ...Expense.ownedBy(actor) }));
        } catch (err) {
          if (!isUniqueViolation(err)) throw err;
          // Another import of the document committed meanwhile: a locking read sees it past this transaction's snapshot (409 naming it).
          await this.refuseDuplicate(actor, trx, columns, { latest: true });
          // Its expense was deleted between the insert and that read: the document is free again, so it
          // is inserted once more (the failed insert undid only itself). Should that meet yet another
          // import deleted as fast, the key is contended: 503, retry, rather than the database's error.
          if (attempt === 2) throw new DatabaseBusy();
        }
      }
    });
  }

  /** `invoicing expenses import`: an e-invoice imported for this business and mode. */
  async importForOwner(businessId: number, mode: 'live' | 'test', document: RawDocument, category: string): Promise<ExpenseView> {
    await this.businesses.get(businessId);
    return this.import(systemActor('cli', { businessId, livemode: mode === 'live' }), document, category);
  }

  /** Ends the document reader's threads. */
  close(): Promise<void> {
    return this.reader.close();
  }

  async remove(actor: Actor, id: number): Promise<{ id: number; deleted: true }> {
    const deleted = await Expense.of(actor, this.db.current).deleteById(id);
    if (deleted === 0) throw new NotFound('Expense', id);
    return { id, deleted: true };
  }

  private async refuseDuplicate(actor: Actor, conn: Knex, columns: ImportedExpense, { latest = false } = {}): Promise<void> {
    const query = Expense.of(actor, conn).findOne({ document_key: columns.document_key });
    const existing = await (latest ? query.forShare() : query);
    if (existing) throw new DuplicateDocument(existing.id, columns.vendor, columns.document_number);
  }

  private async find(actor: Actor, id: number, conn: Knex = this.db.current): Promise<Expense> {
    const row = await Expense.of(actor, conn).findById(id);
    if (!row) throw new NotFound('Expense', id);
    return row;
  }
}
