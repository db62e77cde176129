/** Applies the migrations listed in migrations/index.ts, the same list compiled or under ts-jest. */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Knex } from 'knex';
import { migrations, NamedMigration } from '../../migrations';

/** What a migration may need beyond the database: the application key, to re-seal secrets. */
export interface MigrationContext {
  /** Loaded only when called: most migrations, and a fresh database, never need it. */
  appKey(): Buffer;
}

/** Without a context (a test's scratch database, a benchmark): any migration that needs the key says so. */
const NO_CONTEXT: MigrationContext = {
  appKey() {
    throw new Error('this migration re-seals stored secrets and needs the application key (APP_SECRET_KEY): run `invoicing migrate` with it set');
  },
};

const running = new AsyncLocalStorage<MigrationContext>();

/**
 * The context of the migration run under way. knex's Migration interface passes a migration the
 * connection only, so the context travels with the run's async context instead.
 */
export function migrationContext(): MigrationContext {
  return running.getStore() ?? NO_CONTEXT;
}

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

export async function migrateLatest(knex: Knex, context: MigrationContext = NO_CONTEXT): Promise<void> {
  await running.run(context, () => knex.migrate.latest({ migrationSource: source }));
}

/** Runs one applied migration's `down` (tests of a migration's data changes). */
export async function migrateDown(knex: Knex, name: string, context: MigrationContext = NO_CONTEXT): Promise<void> {
  await running.run(context, () => knex.migrate.down({ migrationSource: source, name }));
}

export async function rollbackAll(knex: Knex): Promise<void> {
  await knex.migrate.rollback({ migrationSource: source }, true);
}

export async function pendingMigrations(knex: Knex): Promise<string[]> {
  const [, pending] = (await knex.migrate.list({ migrationSource: source })) as [unknown[], NamedMigration[]];
  return pending.map((m) => m.name);
}
