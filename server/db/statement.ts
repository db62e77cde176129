/**
 * Statements written once as SQL text, for the hot paths where building a query per call cost more
 * than running it (a record read by id, an event's receivers). The text must read the same on both
 * drivers; values always travel as bindings, booleans as 1/0.
 */
import { Knex } from 'knex';

/** How a read locks the rows it returns until commit; SQLite, whose one writer needs no row locks, takes none. */
export function lockClause(conn: Knex, lock: 'share' | 'update' | undefined): string {
  if (!lock || driverOf(conn) !== 'mysql2') return '';
  return lock === 'share' ? ' lock in share mode' : ' for update';
}

const driverOf = (conn: Knex) => (conn.client as Knex.Client).config.client;

/** The rows a SELECT returns, whichever the driver: mysql2 answers `[rows, fields]`, better-sqlite3 the rows. */
export async function selectRows<Row = Record<string, unknown>>(conn: Knex, sql: string, bindings: readonly Knex.Value[]): Promise<Row[]> {
  const result: unknown = await conn.raw(sql, bindings);
  return (driverOf(conn) === 'mysql2' ? (result as unknown[])[0] : result) as Row[];
}
