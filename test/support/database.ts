/** A fresh database per test file, on the driver the jest project names (TEST_DB): empty, or a copy of the run's migrated template. */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { mysqlConnection } from '../../server/db/connection';
import { copyMysqlTemplate, mysqlTemplate, sqliteTemplate } from './template-database';

export type TestDriver = 'sqlite' | 'mysql';

export function testDriver(): TestDriver {
  return process.env.TEST_DB === 'mysql' ? 'mysql' : 'sqlite';
}

export interface ScratchDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * A database of its own for one test file: empty, or with `migrated` a copy of the run's migrated
 * template (template-database.ts) where the run made one (else empty, and whoever opens it migrates).
 * On MySQL it is named after TEST_MYSQL_URL's database (`<that>_<pid>_<random>`), so a CI run drops
 * only its own leftovers, never those of another run sharing the server.
 */
export async function scratchDatabase(options: { migrated?: boolean } = {}): Promise<ScratchDatabase> {
  const unique = `${process.pid}_${randomBytes(4).toString('hex')}`;
  if (testDriver() === 'sqlite') {
    const name = `inv_test_${unique}`;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'invoicing-'));
    const file = path.join(dir, `${name}.sqlite3`);
    const template = options.migrated ? sqliteTemplate() : undefined;
    if (template) fs.copyFileSync(template, file);
    return {
      url: `sqlite:${file}`,
      drop: () => fs.promises.rm(dir, { recursive: true, force: true }),
    };
  }
  const base = process.env.TEST_MYSQL_URL;
  if (!base) throw new Error('TEST_MYSQL_URL is required for the mysql project');
  const name = `${mysqlConnection(base).database}_${unique}`;
  const admin = knexFactory({ client: 'mysql2', connection: mysqlConnection(base) });
  await admin.raw(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await admin.destroy();
  const template = options.migrated ? mysqlTemplate() : undefined;
  if (template) await copyMysqlTemplate(base, name, template);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const conn = knexFactory({ client: 'mysql2', connection: mysqlConnection(base) });
      await conn.raw(`DROP DATABASE IF EXISTS \`${name}\``);
      await conn.destroy();
    },
  };
}
