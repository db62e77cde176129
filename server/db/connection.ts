/** Turns DATABASE_URL into a knex instance: MySQL/MariaDB through mysql2, or an embedded SQLite file. */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import knexFactory, { Knex } from 'knex';
import type { Logger } from 'pino';
import { systemClock } from '../clock';
import { recordFailedStatements } from './errors';

export type Dialect = 'mysql' | 'sqlite';

export function dialectOf(databaseUrl: string): Dialect {
  return databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'mysql';
}

/** `sqlite:./data/x.sqlite3`, `sqlite:///abs/x.sqlite3` or `sqlite::memory:` → a file name for better-sqlite3. */
export function sqliteFilename(databaseUrl: string): string {
  const rest = databaseUrl.slice('sqlite:'.length);
  if (rest === ':memory:') return rest;
  return rest.startsWith('//') ? rest.slice(2) : rest;
}

export function mysqlConnection(databaseUrl: string): Knex.MySql2ConnectionConfig {
  const url = new URL(databaseUrl);
  return {
    host: url.hostname,
    port: url.port ? Number(url.port) : 3306,
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    database: decodeURIComponent(url.pathname.replace(/^\//, '')),
    charset: 'utf8mb4',
    // Timestamps travel as UTC strings, the same text SQLite stores, so both drivers read alike.
    dateStrings: true,
    timezone: 'Z',
    // The prepared statements (db/statement.ts) a connection keeps, least recently used closed first:
    // the server's max_prepared_stmt_count (16 382 by default) is shared by every connection of every
    // process, which mysql2's default of 16 000 each would exhaust.
    maxPreparedStatements: 256,
  };
}

/**
 * `quiet`: knex's own console warnings are dropped; the caller reports connection errors itself (the
 * CLI). `logger`: they go to the log instead of the console.
 */
export interface KnexOptions {
  quiet?: boolean;
  logger?: Logger;
  /** SQLite: how long a write waits for another process's write to end (DATABASE_BUSY_TIMEOUT_MS). */
  busyTimeoutMs?: number;
}

/** The default of DATABASE_BUSY_TIMEOUT_MS. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

interface KnexTransactionInternals {
  trxClient: { query(conn: unknown, sql: string): Promise<unknown> };
}

/**
 * knex's better-sqlite3 client, whose transactions begin with `BEGIN IMMEDIATE`: they take the write
 * lock when they start, waiting for it up to the busy timeout. knex's plain `BEGIN` starts a read
 * transaction that upgrades at its first write; in WAL mode an upgrade after another process has
 * written since the read began fails with SQLITE_BUSY at once, without waiting, so concurrent writers
 * from the CLI or another server process failed. Every transaction here may write, and within one
 * process they already queue behind the single connection, so nothing is lost by taking the lock up
 * front. Nested transactions (savepoints) are unchanged. knex exposes no option for this: its own
 * classes are extended, the same ones `client: 'better-sqlite3'` uses.
 */
function immediateSqliteClient(): typeof Knex.Client {
  const load = createRequire(require.resolve('knex'));
  const BetterSqlite3Client = load('./lib/dialects/better-sqlite3') as typeof Knex.Client;
  const SqliteTransaction = load('./lib/dialects/sqlite3/execution/sqlite-transaction') as new (...args: unknown[]) => object;
  class ImmediateTransaction extends SqliteTransaction {
    // Returns the statement's own promise: a refused BEGIN rejects the transaction before its work runs.
    begin(conn: unknown): Promise<unknown> {
      return (this as unknown as KnexTransactionInternals).trxClient.query(conn, 'BEGIN IMMEDIATE;');
    }
  }
  return class ImmediateBetterSqlite3Client extends BetterSqlite3Client {
    override transaction(...args: unknown[]): Knex.Transaction {
      return new ImmediateTransaction(this, ...args) as unknown as Knex.Transaction;
    }
  };
}

/** How often one and the same connection problem is logged: once a minute, not once per request of an outage. */
const REPEAT_LOG_MS = 60_000;

/** knex's warnings and errors (a lost connection, a failed acquire) as log lines: the first line of the message, no stack. */
function knexLog({ quiet, logger }: KnexOptions): Knex.Config['log'] {
  const silent = { warn() {}, error() {}, debug() {}, deprecate() {} };
  if (quiet || !logger) return quiet ? silent : undefined;
  const lastLogged = new Map<string, number>();
  const say = (level: 'warn' | 'error') => (message: unknown) => {
    const text = String(message instanceof Error ? message.message : message).split('\n')[0].slice(0, 300);
    const now = systemClock.now().getTime();
    if (now - (lastLogged.get(text) ?? -Infinity) < REPEAT_LOG_MS) return;
    if (lastLogged.size > 100) lastLogged.clear();
    lastLogged.set(text, now);
    logger[level]({ database: text }, 'database connection problem (repeats are logged once a minute)');
  };
  return { ...silent, warn: say('warn'), error: say('error') };
}

export function createKnex(databaseUrl: string, options: KnexOptions = {}): Knex {
  const knex = knexFactory(knexConfig(databaseUrl, options));
  recordFailedStatements(knex);
  return knex;
}

function knexConfig(databaseUrl: string, options: KnexOptions): Knex.Config {
  const log = knexLog(options);
  const common: Knex.Config = {
    ...(log ? { log } : {}),
    // A failed query's message names its statement with `?`, never with the values (personal data).
    compileSqlOnError: false,
  };
  if (dialectOf(databaseUrl) === 'mysql') {
    return {
      ...common,
      client: 'mysql2',
      connection: mysqlConnection(databaseUrl),
      pool: {
        min: 0,
        max: 10,
        afterCreate: (conn: { query: (sql: string, cb: (err: Error | null) => void) => void }, done: (err: Error | null, conn: unknown) => void) => {
          conn.query("SET time_zone = '+00:00'", (err) => done(err, conn));
        },
      },
    };
  }
  const filename = sqliteFilename(databaseUrl);
  if (filename !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(filename)), { recursive: true });
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  return {
    ...common,
    client: immediateSqliteClient(),
    connection: { filename },
    useNullAsDefault: true,
    pool: {
      // One connection: SQLite has one writer, and every statement of the process queues behind it.
      // Other processes (the CLI, another server) write to the same file: a write waits for theirs up
      // to the busy timeout. better-sqlite3 waits synchronously, so the process stalls that long at
      // worst; writes are short, and a longer wait is refused (503) rather than queued.
      min: 1,
      max: 1,
      afterCreate: (conn: { pragma: (sql: string) => unknown }, done: (err: Error | null, conn: unknown) => void) => {
        conn.pragma('journal_mode = WAL');
        conn.pragma('foreign_keys = ON');
        conn.pragma(`busy_timeout = ${busyTimeoutMs}`);
        done(null, conn);
      },
    },
  };
}
