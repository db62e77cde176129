/** Applies the migrations listed in migrations/index.ts, the same list compiled or under ts-jest. */
import { Knex } from 'knex';
import { migrations, NamedMigration } from '../../migrations';

class ListedMigrations implements Knex.MigrationSource<NamedMigration> {
  getMigrations(): Promise<NamedMigration[]> {
    return Promise.resolve(migrations);
  }
  getMigrationName(migration: NamedMigration): string {
    return migration.name;
  }
  getMigration(migration: NamedMigration): Promise<Knex.Migration> {
    return Promise.resolve(migration);
  }
}

const source = new ListedMigrations();

export async function migrateLatest(knex: Knex): Promise<void> {
  await knex.migrate.latest({ migrationSource: source });
}

export async function rollbackAll(knex: Knex): Promise<void> {
  await knex.migrate.rollback({ migrationSource: source }, true);
}

export async function pendingMigrations(knex: Knex): Promise<string[]> {
  const [, pending] = (await knex.migrate.list({ migrationSource: source })) as [unknown[], NamedMigration[]];
  return pending.map((m) => m.name);
}
