/** Turns DATABASE_URL into a knex instance: MySQL/MariaDB through mysql2, or an embedded SQLite file. */
import fs from 'node:fs';
import path from 'node:path';
import knexFactory, { Knex } from 'knex';
import type { Logger } from 'pino';
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
  };
}

/**
 * `quiet`: knex's own console warnings are dropped; the caller reports connection errors itself (the
 * CLI). `logger`: they go to the log instead of the console.
 */
export interface KnexOptions {
  quiet?: boolean;
  logger?: Logger;
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
    const now = Date.now();
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
  return {
    ...common,
    client: 'better-sqlite3',
    connection: { filename },
    useNullAsDefault: true,
    pool: {
      // One connection: SQLite has one writer, and every statement of the process queues behind it.
      min: 1,
      max: 1,
      afterCreate: (conn: { pragma: (sql: string) => unknown }, done: (err: Error | null, conn: unknown) => void) => {
        conn.pragma('journal_mode = WAL');
        conn.pragma('foreign_keys = ON');
        conn.pragma('busy_timeout = 5000');
        done(null, conn);
      },
    },
  };
}
