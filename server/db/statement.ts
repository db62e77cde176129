/**
 * Statements written once as SQL text, for the hot paths where building a query per call cost more
 * than running it (a record read by id, an event's receivers, an invoice's rows). The text must read
 * the same on both drivers; values always travel as bindings, booleans as 1/0. On MySQL they run as
 * prepared statements (mysql2's `execute`): the server parses each text once per connection rather
 * than once per call, and values travel in the binary protocol. They take their connection from
 * knex's pool, or the open transaction's, so they join a transaction as any other query does.
 */
import { Knex } from 'knex';
import { Model, QueryBuilder } from 'objection';

/** How a read locks the rows it returns until commit; SQLite, whose one writer needs no row locks, takes none. */
export function lockClause(conn: Knex, lock: 'share' | 'update' | undefined): string {
  if (!lock || driverOf(conn) !== 'mysql2') return '';
  return lock === 'share' ? ' lock in share mode' : ' for update';
}

const driverOf = (conn: Knex) => (conn.client as Knex.Client).config.client;

/** What mysql2's callback connection offers, as knex's pool hands it out. */
interface Mysql2Connection {
  __knexUid?: string;
  __knexTxId?: string;
  execute(sql: string, values: readonly Knex.Value[], callback: (err: Error | null, result: unknown) => void): void;
}

/**
 * Runs `sql` as a prepared statement on a connection of `conn` (the pool's, or the open
 * transaction's). It is announced to knex's `query` and `query-error` listeners as knex's own
 * statements are, so what watches the statements (a failed one's text kept for the log, a test
 * counting writes) sees these too.
 */
async function execute(conn: Knex, sql: string, bindings: readonly Knex.Value[]): Promise<unknown> {
  const client = conn.client as Knex.Client;
  const connection = (await client.acquireConnection()) as Mysql2Connection;
  const query = { sql, bindings, method: 'raw', __knexUid: connection.__knexUid, __knexTxId: connection.__knexTxId };
  try {
    client.emit('query', query);
    return await new Promise((resolve, reject) => {
      connection.execute(sql, bindings, (err, result) => {
        if (err) {
          client.emit('query-error', err, query);
          reject(err);
        } else resolve(result);
      });
    });
  } finally {
    await client.releaseConnection(connection);
  }
}

/** The rows a SELECT returns, whichever the driver. */
export async function selectRows<Row = Record<string, unknown>>(conn: Knex, sql: string, bindings: readonly Knex.Value[]): Promise<Row[]> {
  if (driverOf(conn) === 'mysql2') return (await execute(conn, sql, bindings)) as Row[];
  return (await conn.raw(sql, bindings)) as Row[];
}

/** What a write did: the id its (first) inserted row got, and how many rows it changed. */
export interface Written {
  insertId: number;
  affectedRows: number;
}

/** Runs an INSERT, UPDATE or DELETE written as SQL text. */
export async function writeRows(conn: Knex, sql: string, bindings: readonly Knex.Value[]): Promise<Written> {
  if (driverOf(conn) === 'mysql2') {
    const { insertId, affectedRows } = (await execute(conn, sql, bindings)) as Written;
    return { insertId, affectedRows };
  }
  const { lastInsertRowid, changes } = await conn.raw<{ lastInsertRowid: number | bigint; changes: number }>(sql, bindings);
  return { insertId: Number(lastInsertRowid), affectedRows: changes };
}

/**
 * Adds one to a counter column of the row of `table` with this id and answers its new value, in one
 * statement (the UPDATE locks the row until commit): MySQL answers it as the statement's insert id,
 * through LAST_INSERT_ID(expr); SQLite through RETURNING. Undefined when no row has that id.
 */
export async function incrementCounter(conn: Knex, table: string, column: string, id: number): Promise<number | undefined> {
  if (driverOf(conn) === 'mysql2') {
    const { insertId, affectedRows } = await writeRows(conn, `update ${table} set ${column} = last_insert_id(${column} + 1) where id = ?`, [id]);
    return affectedRows === 1 ? insertId : undefined;
  }
  const [row] = await selectRows<Record<string, number>>(conn, `update ${table} set ${column} = ${column} + 1 where id = ? returning ${column}`, [id]);
  return row?.[column];
}

/** Column values as stored (timestamps as text, booleans as 1/0, JSON as its text); undefined leaves a column to its default. */
export type StoredRow = Record<string, Knex.Value | undefined>;

/** SQLite's limit on the terms of a compound SELECT (SQLITE_MAX_COMPOUND_SELECT). */
const SQLITE_ROWS_PER_INSERT = 500;

/**
 * One multi-row INSERT of `rows`, whose columns are those of the first row. Returns the id the first
 * row got. The text depends only on the table, the columns and the number of rows, so on MySQL it
 * is prepared once per connection; a value left undefined is written as the column's `default`.
 * SQLite, which has no `default` in a VALUES list, takes knex's insert.
 */
export async function insertRows(conn: Knex, table: string, rows: readonly StoredRow[]): Promise<number> {
  if (driverOf(conn) !== 'mysql2') {
    // knex writes SQLite's rows as one compound SELECT, which takes at most 500 terms: in parts, numbered on by the one writer.
    let first: number | undefined;
    for (let from = 0; from < rows.length; from += SQLITE_ROWS_PER_INSERT) {
      const part = rows.slice(from, from + SQLITE_ROWS_PER_INSERT);
      const [id] = await conn(table).insert(part as Record<string, Knex.Value>[]);
      // knex answers SQLite's last row id: the first row's is that less the rows after it.
      first ??= Number(id) - (part.length - 1);
    }
    return first!;
  }
  const columns = Object.keys(rows[0]);
  const bindings: Knex.Value[] = [];
  const tuples = rows.map((row) => {
    const marks = columns.map((column) => {
      const value = row[column];
      if (value === undefined) return 'default';
      bindings.push(value);
      return '?';
    });
    return `(${marks.join(', ')})`;
  });
  const sql = `insert into \`${table}\` (${columns.map((column) => `\`${column}\``).join(', ')}) values ${tuples.join(', ')}`;
  return (await writeRows(conn, sql, bindings)).insertId;
}

/** Per database (knex's config, which a transaction's client shares): whether one INSERT's rows get consecutive ids. */
const consecutiveIds = new WeakMap<object, Promise<boolean>>();

/**
 * Whether the rows of one multi-row INSERT get consecutive ids, so they need not be read back:
 * SQLite's single writer numbers them in order; InnoDB does for an INSERT whose row count is known
 * unless `innodb_autoinc_lock_mode` is 2 ("interleaved", MySQL 8's default), and steps them by one
 * unless `auto_increment_increment` says otherwise (a multi-primary setup): read once per database.
 */
function insertsNumberConsecutively(conn: Knex): Promise<boolean> {
  if (driverOf(conn) !== 'mysql2') return Promise.resolve(true);
  const config = (conn.client as Knex.Client).config as object;
  let known = consecutiveIds.get(config);
  if (!known) {
    // A server without the variables (not InnoDB) is not assumed to number consecutively: its rows are read back.
    known = selectRows<{ mode: number | string; step: number | string }>(conn, 'select @@innodb_autoinc_lock_mode as mode, @@auto_increment_increment as step', []).then(
      ([row]) => Number(row.mode) < 2 && Number(row.step) === 1,
      () => {
        // Not known (the database is unreachable, say): read back this time, and asked again next time.
        consecutiveIds.delete(config);
        return false;
      },
    );
    consecutiveIds.set(config, known);
  }
  return known;
}

/**
 * `insertRows`, and the id of each row in order when the database numbers them consecutively
 * (see insertsNumberConsecutively); undefined otherwise, and the caller reads them back.
 */
export async function insertRowsNumbered(conn: Knex, table: string, rows: readonly StoredRow[]): Promise<number[] | undefined> {
  const consecutive = await insertsNumberConsecutively(conn);
  const first = await insertRows(conn, table, rows);
  return consecutive ? rows.map((_, i) => first + i) : undefined;
}

/** One page of an Objection query's rows, read into its model, and how many rows it matches in all. */
export interface ModelPage<M> {
  rows: M[];
  total: number;
}

/** Per database (knex's config) and table: whether the table has its (business_id, livemode, id) index. */
const tenantIdIndexes = new WeakMap<object, Map<string, Promise<boolean>>>();

/** The name knex gives the (business_id, livemode, id) index of `table`. */
const tenantIdIndex = (table: string) => `${table}_business_id_livemode_id_index`;

/** Whether `table` has its (business_id, livemode, id) index, read once per database and table. */
function hasTenantIdIndex(conn: Knex, table: string): Promise<boolean> {
  const config = (conn.client as Knex.Client).config as object;
  let tables = tenantIdIndexes.get(config);
  if (!tables) tenantIdIndexes.set(config, (tables = new Map<string, Promise<boolean>>()));
  let known = tables.get(table);
  if (!known) {
    known = selectRows(conn, 'select 1 from information_schema.statistics where table_schema = database() and table_name = ? and index_name = ? limit 1', [
      table,
      tenantIdIndex(table),
    ]).then(
      (rows) => rows.length > 0,
      () => {
        // Not known (the database is unreachable, say): counted without the index, and asked again next time.
        tables.delete(table);
        return false;
      },
    );
    tables.set(table, known);
  }
  return known;
}

/**
 * The statement counting what `sql` (a query on `table`) matches. On MySQL, a query whose only
 * conditions are its tenancy, and an id cursor, is counted straight through the table's
 * (business_id, livemode, id) index: the narrowest index covering those conditions. Left to
 * itself MariaDB picks a wider one, such as (business_id, livemode, created_at), and a count of
 * 10 000 rows costs it a third more. Any other query, or a table without that index, is counted
 * around its own text.
 */
async function countStatement(conn: Knex, sql: string, table: string): Promise<string> {
  const around = `select count(*) as total from (${sql}) as matched`;
  if (driverOf(conn) !== 'mysql2') return around;
  const from = ` from \`${table}\``;
  const tenancy = `${from} where \`${table}\`.\`business_id\` = ? and \`${table}\`.\`livemode\` = ?`;
  const tenancyOnly = new RegExp(`^select [^()]+${escapeRegExp(tenancy)}(?: and \`${table}\`.\`id\` > \\?)?$`);
  if (!tenancyOnly.test(sql) || !(await hasTenantIdIndex(conn, table))) return around;
  return `select count(*) as total${from} force index (\`${tenantIdIndex(table)}\`)${sql.slice(sql.indexOf(tenancy) + from.length)}`;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A page of the rows an Objection query matches, ordered by `table`.id, and their number: the query
 * is built once (its tenancy check included) and its text, a fixed one for each combination of
 * filters, is run twice as prepared statements (see `selectRows`): the page, and its count
 * (countStatement). The rows are read into the model as Objection reads them. Only for plain
 * queries: no eager loading, no hooks after the fetch, and no order or page of their own.
 */
export async function selectModelPage<M extends Model>(query: QueryBuilder<M, M[]>, table: string, page: { limit: number; offset: number }): Promise<ModelPage<M>> {
  if (query.has(/orderBy|limit|offset/)) throw new Error(`selectModelPage orders and pages the query itself: ${table}`);
  const { sql, bindings } = query.toKnexQuery().toSQL();
  const conn = query.knex();
  const [rows, [{ total }]] = await Promise.all([
    selectRows(conn, `${sql} order by \`${table}\`.\`id\` asc limit ? offset ?`, [...bindings, page.limit, page.offset]),
    countStatement(conn, sql, table).then((count) => selectRows<{ total: number | string }>(conn, count, bindings)),
  ]);
  const model = query.modelClass();
  return { rows: rows.map((row) => model.fromDatabaseJson(row)), total: Number(total) };
}
