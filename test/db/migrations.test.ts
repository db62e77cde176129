import { rollbackAll, migrateLatest, pendingMigrations } from '../../server/db/migrate';
import { Database } from '../../server/db/database';
import { scratchDatabase } from '../support/database';

describe('migrations', () => {
  test('when every migration is applied, rolled back and applied again, then the schema comes back whole', async () => {
    const scratch = await scratchDatabase();
    const db = Database.open(scratch.url);

    await migrateLatest(db.knex);
    await rollbackAll(db.knex);
    const afterRollback = await db.knex.schema.hasTable('clients');
    await migrateLatest(db.knex);

    expect(afterRollback).toBe(false);
    expect(await pendingMigrations(db.knex)).toEqual([]);
    for (const table of ['businesses', 'api_keys', 'clients', 'idempotency_keys']) {
      expect(await db.knex.schema.hasTable(table)).toBe(true);
    }
    await db.close();
    await scratch.drop();
  });
});
