import { Command } from 'commander';
import { atRun, cliConfig, openDatabase } from '../context';
import { redactUrls } from '../errors';
import { examples, output } from '../output';
import { groupCommand } from './groups';

export function migrateCommand(): Command {
  return groupCommand('migrate')
    .option('--json', 'machine-readable output: { applied: [migration names] }')
    .addHelpText('after', examples('invoicing migrate', 'DATABASE_URL=mysql://app:secret@127.0.0.1:3306/invoicing invoicing migrate --json'))
    .action(async (opts: { json?: boolean }) => {
      const config = cliConfig();
      const db = await openDatabase(config);
      try {
        const pending = await db.pendingMigrations();
        await db.migrate({ appKey: () => atRun.appKey().loadAppKey(config) });
        output(opts.json, { applied: pending }, () =>
          pending.length
            ? [...pending.map((name) => `applied ${name}`), `${redactUrls(config.databaseUrl)} is up to date`]
            : [`${redactUrls(config.databaseUrl)} is up to date`],
        );
      } finally {
        await db.close();
      }
    });
}
