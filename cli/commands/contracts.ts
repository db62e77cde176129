import { Command } from 'commander';
import { withContext } from '../context';
import { UsageError } from '../errors';
import { positiveId } from '../options';
import { examples, output } from '../output';
import { ensureOptions } from '../prompt';
import { groupCommand } from './groups';

export function contractsCommand(): Command {
  const contracts = groupCommand('contracts');

  contracts
    .command('countersign <contract-id>')
    .description('Sign a contract for its business; when the client has signed too, it is signed and contract.signed fires')
    .option('--name <name>', 'the full name of the person signing for the business')
    .option('--json', 'machine-readable output: the contract with its signatures')
    .addHelpText('after', examples('invoicing contracts countersign 12 --name "Ada Lovelace"', 'invoicing contracts countersign 12 --name "Ada Lovelace" --json'))
    .action(async (rawId: string, raw: { name?: string; json?: boolean }) => {
      const id = positiveId(rawId, 'contract id');
      const opts = await ensureOptions(raw, [{ key: 'name', flag: '--name', message: 'Full name of the signer' }]);
      const name = String(opts.name).trim();
      if (!name || name.length > 255) throw new UsageError('--name must be 1 to 255 characters');
      const contract = await withContext(({ services }) => services.contracts.countersignAsOwner(id, { name, ipAddress: null, userAgent: 'invoicing CLI' }));
      output(opts.json, contract, () => [`Countersigned contract ${contract.id} as ${name}`, `Status: ${contract.status}`]);
    });

  return contracts;
}
