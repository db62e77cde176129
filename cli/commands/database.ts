import { Command } from 'commander';
import { loadConfig } from '../../server/config';
import { Database } from '../../server/db/database';
import { pendingMigrations } from '../../server/db/migrate';
import { output } from '../context';

export function migrateCommand(): Command {
  return new Command('migrate')
    .description('Apply pending database migrations (DATABASE_URL)')
    .option('--json', 'machine-readable output')
    .action(async (opts: { json?: boolean }) => {
      const db = Database.open(loadConfig().databaseUrl);
      try {
        const pending = await pendingMigrations(db.knex);
        await db.migrate();
        output(opts.json, { applied: pending }, () =>
          pending.length ? pending.map((name) => `applied ${name}`) : ['The database is up to date'],
        );
      } finally {
        await db.close();
      }
    });
}
