/** The database handle services receive: knex plus a transaction that a whole request can share. */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Knex } from 'knex';
import { createKnex, Dialect, dialectOf } from './connection';
import { migrateLatest } from './migrate';

export class Database {
  private readonly ambient = new AsyncLocalStorage<Knex.Transaction>();

  constructor(
    readonly knex: Knex,
    readonly dialect: Dialect,
  ) {}

  static open(databaseUrl: string, options: { quiet?: boolean } = {}): Database {
    // No global Model.knex(): every query names its connection, so none can reach the wrong database.
    return new Database(createKnex(databaseUrl, options), dialectOf(databaseUrl));
  }

  /** The connection to query with: the request's open transaction if there is one, else the pool. */
  get current(): Knex {
    return this.open() ?? this.knex;
  }

  /**
   * Runs `work` atomically. Inside an open transaction (an idempotent request's, or an outer
   * service's) it joins it, so a change, its events and its stored response commit together; a
   * new transaction becomes the ambient one for every service `work` calls.
   */
  async transaction<T>(work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    const open = this.open();
    if (open) return work(open);
    return this.knex.transaction((trx) => this.ambient.run(trx, () => work(trx)));
  }

  /**
   * The ambient transaction, unless it has ended: work started after a commit (e.g. the webhook
   * worker, nudged by it) still runs in the committed transaction's async context.
   */
  private open(): Knex.Transaction | undefined {
    const trx = this.ambient.getStore();
    return trx && !trx.isCompleted() ? trx : undefined;
  }

  /** Makes `trx` the transaction every `transaction()` and `current` joins within `fn`'s async context. */
  withRequestTransaction<T>(trx: Knex.Transaction, fn: () => T): T {
    return this.ambient.run(trx, fn);
  }

  migrate(): Promise<void> {
    return migrateLatest(this.knex);
  }

  async close(): Promise<void> {
    await this.knex.destroy();
  }
}
