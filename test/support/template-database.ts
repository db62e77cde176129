/**
 * One migrated database per test run and driver, copied for each app a test starts: migrating a
 * fresh MariaDB database takes seconds of DDL (every ALTER of every migration), copying the
 * resulting tables well under one. jest runs this module's `setup` as its globalSetup, before any
 * worker starts (SQLite always, MySQL when TEST_MYSQL_URL is set), and hands the templates to the
 * workers in environment variables; `teardown` removes them. Tests of the migrations themselves take
 * an empty database (`scratchDatabase()`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory, { Knex } from 'knex';
import { mysqlConnection } from '../../server/db/connection';
import { Database } from '../../server/db/database';

/** What a copy is made from (on MySQL): the template's name, and each table's statement and whether it has rows to copy. */
export interface MysqlTemplate {
  database: string;
  tables: { name: string; create: string; hasRows: boolean }[];
}

/** Where the workers find the templates: an SQLite file, and a JSON file describing the MySQL template. */
const SQLITE_TEMPLATE = 'TEST_SQLITE_TEMPLATE';
const MYSQL_TEMPLATE = 'TEST_MYSQL_TEMPLATE';

export async function setup(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'invoicing-template-'));
  await Promise.all([makeSqliteTemplate(dir), makeMysqlTemplate(dir)]);
}

async function makeSqliteTemplate(dir: string): Promise<void> {
  const file = path.join(dir, 'template.sqlite3');
  const db = Database.open(`sqlite:${file}`, { quiet: true });
  await db.migrate();
  await db.close();
  process.env[SQLITE_TEMPLATE] = file;
}

async function makeMysqlTemplate(dir: string): Promise<void> {
  const base = process.env.TEST_MYSQL_URL;
  if (!base) return;
  // Named after TEST_MYSQL_URL's database and this run's process, as the scratch databases are: two
  // runs on one server (two developers' `npm test`, or CI beside them) never drop each other's.
  const database = `${mysqlConnection(base).database}_template_${process.pid}`;
  const admin = knexFactory({ client: 'mysql2', connection: mysqlConnection(base) });
  try {
    await admin.raw(`DROP DATABASE IF EXISTS \`${database}\``);
    await admin.raw(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
    const url = new URL(base);
    url.pathname = `/${database}`;
    const db = Database.open(url.toString(), { quiet: true });
    await db.migrate();
    await db.close();
    const template: MysqlTemplate = { database, tables: await describeTables(admin, database) };
    const file = path.join(dir, 'mysql-template.json');
    fs.writeFileSync(file, JSON.stringify(template));
    process.env[MYSQL_TEMPLATE] = file;
  } finally {
    await admin.destroy();
  }
}

/** Each table's CREATE TABLE (foreign keys included, which `CREATE TABLE … LIKE` would drop), without its next auto-increment value. */
async function describeTables(admin: Knex, database: string): Promise<MysqlTemplate['tables']> {
  const [rows] = (await admin.raw('SELECT table_name AS name FROM information_schema.tables WHERE table_schema = ? AND table_type = ?', [database, 'BASE TABLE'])) as [
    { name: string }[],
  ];
  return Promise.all(
    rows.map(async ({ name }) => {
      const [[shown]] = (await admin.raw(`SHOW CREATE TABLE \`${database}\`.\`${name}\``)) as [Record<string, string>[]];
      const [[{ count }]] = (await admin.raw(`SELECT COUNT(*) AS count FROM \`${database}\`.\`${name}\``)) as [{ count: number }[]];
      return { name, create: shown['Create Table'].replace(/ AUTO_INCREMENT=\d+/, ''), hasRows: Number(count) > 0 };
    }),
  );
}

export async function teardown(): Promise<void> {
  const template = mysqlTemplate();
  if (template && process.env.TEST_MYSQL_URL) {
    const admin = knexFactory({ client: 'mysql2', connection: mysqlConnection(process.env.TEST_MYSQL_URL) });
    await admin.raw(`DROP DATABASE IF EXISTS \`${template.database}\``);
    await admin.destroy();
  }
  const file = process.env[SQLITE_TEMPLATE];
  if (file) fs.rmSync(path.dirname(file), { recursive: true, force: true });
}

/** The migrated SQLite file to copy, when the run made one. */
export function sqliteTemplate(): string | undefined {
  return process.env[SQLITE_TEMPLATE];
}

/** The migrated MySQL database to copy, when the run made one. */
export function mysqlTemplate(): MysqlTemplate | undefined {
  const file = process.env[MYSQL_TEMPLATE];
  return file ? (JSON.parse(fs.readFileSync(file, 'utf8')) as MysqlTemplate) : undefined;
}

/**
 * Fills the empty database `target` with the template's tables and rows. The tables are created
 * side by side (foreign keys unchecked, so their order does not matter) on a few connections.
 */
export async function copyMysqlTemplate(base: string, target: string, template: MysqlTemplate): Promise<void> {
  const conn = knexFactory({
    client: 'mysql2',
    connection: { ...mysqlConnection(base), database: target },
    pool: { min: 0, max: 4, afterCreate: (c: { query(sql: string, cb: (err: Error | null) => void): void }, done: (err: Error | null, c: unknown) => void) => c.query('SET foreign_key_checks = 0', (err) => done(err, c)) },
  });
  try {
    await Promise.all(template.tables.map((table) => conn.raw(table.create)));
    await Promise.all(
      template.tables.filter((table) => table.hasRows).map((table) => conn.raw(`INSERT INTO \`${target}\`.\`${table.name}\` SELECT * FROM \`${template.database}\`.\`${table.name}\``)),
    );
  } finally {
    await conn.destroy();
  }
}
