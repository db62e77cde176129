import { Command } from 'commander';
import { output, withContext } from '../context';
import { ensureOptions } from '../prompt';

interface CreateOptions {
  name?: string;
  currency?: string;
  country?: string;
  plan?: string;
  json?: boolean;
}

export function businessCommand(): Command {
  const business = new Command('business').description('Manage businesses');
  business
    .command('create')
    .description('Create a business')
    .option('--name <name>', 'business name')
    .option('--currency <code>', 'ISO 4217 currency, e.g. USD')
    .option('--country <cc>', 'ISO 3166-1 alpha-2 country, e.g. US')
    .option('--plan <plan>', 'plan name (default: free)')
    .option('--json', 'machine-readable output')
    .action(async (raw: CreateOptions) => {
      const opts = await ensureOptions(raw, [
        { key: 'name', flag: '--name', message: 'Business name' },
        { key: 'currency', flag: '--currency', message: 'Currency (ISO 4217, e.g. USD)' },
      ]);
      const created = await withContext(({ services }) =>
        services.businesses.create({ name: opts.name!, currency: opts.currency!, country: opts.country, plan: opts.plan }),
      );
      output(opts.json, created, () => [
        `Created business ${created.id}: ${created.name} (${created.currency}${created.country ? `, ${created.country}` : ''}, plan ${created.plan})`,
      ]);
    });
  return business;
}
