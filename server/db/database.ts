/**
 * The database handle services receive: knex plus a transaction that a whole request can share, and
 * work that waits for that transaction's commit. The raw knex handle stays in server/db/: services
 * query through models (`current` is the connection models run on).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Knex } from 'knex';
import { withoutBusinessClock } from '../clock';
import { createKnex, Dialect, dialectOf, KnexOptions } from './connection';
import { MigrationContext, migrateLatest, pendingMigrations } from './migrate';

interface OpenTransaction {
  trx: Knex.Transaction;
  /** Work to run once the transaction has committed (dropped if it rolls back). */
  afterCommit: (() => unknown)[];
}

export class Database {
  private readonly ambient = new AsyncLocalStorage<OpenTransaction>();

  private constructor(
    /** The raw handle, for migrations, tests and benchmarks: the linter refuses it elsewhere (services query through models on `current`). */
    readonly knex: Knex,
    readonly dialect: Dialect,
  ) {}

  static open(databaseUrl: string, options: KnexOptions = {}): Database {
    // No global Model.knex(): every query names its connection, so none can reach the wrong database.
    return new Database(createKnex(databaseUrl, options), dialectOf(databaseUrl));
  }

  /** The connection to query with: the open transaction if there is one, else the pool. */
  get current(): Knex {
    return this.open()?.trx ?? this.knex;
  }

  /**
   * Runs `work` atomically. Inside an open transaction (an idempotent request's, or an outer
   * service's) it joins it, so a change, its events and its stored response commit together; a
   * new transaction becomes the ambient one for every service `work` calls. It resolves after the
   * commit and after the work registered with `afterCommit` has run. `readCommitted` (MySQL) takes no
   * gap locks: for a job claim, whose locking scan would otherwise block the inserts of new jobs.
   */
  async transaction<T>(work: (trx: Knex.Transaction) => Promise<T>, options: { readCommitted?: boolean } = {}): Promise<T> {
    const open = this.open();
    if (open) return work(open.trx);
    const scope: Omit<OpenTransaction, 'trx'> = { afterCommit: [] };
    const config: Knex.TransactionConfig = options.readCommitted && this.dialect === 'mysql' ? { isolationLevel: 'read committed' } : {};
    const result = await this.knex.transaction((trx) => this.ambient.run({ trx, ...scope }, () => work(trx)), config);
    await Promise.all(scope.afterCommit.map((fn) => this.outside(fn)));
    return result;
  }

  /**
   * Runs `fn` once the open transaction commits (never if it rolls back), or at once when none is
   * open; always outside any transaction's async context, so what it starts (a worker's claim, an
   * e-mail) cannot join the transaction that caused it, nor inherit its business clock. `fn` handles its own errors.
   */
  afterCommit(fn: () => unknown): void {
    const open = this.open();
    if (open) open.afterCommit.push(fn);
    else void this.outside(fn);
  }

  /** Answers `select 1`: the database is reachable. */
  async ping(): Promise<void> {
    await this.knex.raw('select 1');
  }

  /** `context` gives the migrations that re-seal secrets the application key. */
  migrate(context?: MigrationContext): Promise<void> {
    return migrateLatest(this.knex, context);
  }

  /** The names of the migrations not yet applied. */
  pendingMigrations(): Promise<string[]> {
    return pendingMigrations(this.knex);
  }

  async close(): Promise<void> {
    await this.knex.destroy();
  }

  /** Also outside the business clock the work was done under: what follows a commit (a worker's claims) may act for other businesses. */
  private async outside(fn: () => unknown): Promise<void> {
    await this.ambient.exit(() => withoutBusinessClock(fn));
  }

  /** The ambient transaction, unless it has ended. */
  private open(): OpenTransaction | undefined {
    const open = this.ambient.getStore();
    return open && !open.trx.isCompleted() ? open : undefined;
  }
}
