/** Column conventions shared by the migrations: UTC millisecond timestamps, utf8mb4 tables on MySQL. */
import { Knex } from 'knex';

export function isMysql(knex: Knex): boolean {
  // Knex types its `client` as any; it is the Client instance the connection was made with.
  const client = (knex.client as Knex.Client).config.client;
  return typeof client === 'string' && ['mysql', 'mysql2'].includes(client);
}

export function timestampColumn(t: Knex.TableBuilder, name: string): Knex.ColumnBuilder {
  return t.datetime(name, { precision: 3 });
}

export function tableDefaults(knex: Knex, t: Knex.CreateTableBuilder): void {
  if (!isMysql(knex)) return;
  t.charset('utf8mb4');
  t.collate('utf8mb4_unicode_ci');
  t.engine('InnoDB');
}

/** Byte-for-byte comparison on MySQL, as SQLite compares text by default. */
export function binary(knex: Knex, column: Knex.ColumnBuilder): Knex.ColumnBuilder {
  return isMysql(knex) ? column.collate('utf8mb4_bin') : column;
}

/**
 * Drops columns with `alter table … drop column`, which both drivers run in place. knex's
 * dropColumn rebuilds a SQLite table, and inside the migration's transaction the foreign keys stay
 * on: dropping the old table is then refused (rows elsewhere point at it) or cascades to its
 * children's rows (an invoice's items).
 */
export async function dropColumnsInPlace(knex: Knex, table: string, columns: readonly string[]): Promise<void> {
  for (const column of columns) await knex.raw('alter table ?? drop column ??', [table, column]);
}
