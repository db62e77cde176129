/** Expenses of a business: amounts in the currency's minor units, filtered by category and date. */
import { Knex } from 'knex';
import { Actor } from '../auth/actor';
import { BusinessService } from '../businesses/service';
import { Database } from '../db/database';
import { NotFound, ValidationFailed } from '../errors';
import { Page, paginate } from '../http/pagination';
import { collectMinor } from '../money/amount';
import { blankToNull } from '../validation';
import { Expense } from './model';
import { ExpenseInput, ExpenseListParams, ExpenseView } from './schema';
import { toExpenseView } from './view';

/** The stored columns of a whole expense; the amount's decimals must suit its currency (422 otherwise). */
function columnsFor(merged: ExpenseInput & { currency: string }): Partial<Expense> {
  const errors = new Map<string, string[]>();
  const amount = collectMinor(errors, 'amount', merged.amount, merged.currency);
  if (errors.size) throw new ValidationFailed(Object.fromEntries(errors));
  return {
    amount,
    currency: merged.currency,
    category: merged.category,
    date: merged.date,
    description: blankToNull(merged.description),
    vendor: blankToNull(merged.vendor),
    notes: blankToNull(merged.notes),
  };
}

export class ExpenseService {
  constructor(
    private readonly db: Database,
    private readonly businesses: BusinessService,
  ) {}

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

  async remove(actor: Actor, id: number): Promise<{ id: number; deleted: true }> {
    const deleted = await Expense.of(actor, this.db.current).deleteById(id);
    if (deleted === 0) throw new NotFound('Expense', id);
    return { id, deleted: true };
  }

  private async find(actor: Actor, id: number, conn: Knex = this.db.current): Promise<Expense> {
    const row = await Expense.of(actor, conn).findById(id);
    if (!row) throw new NotFound('Expense', id);
    return row;
  }
}
