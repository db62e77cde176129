import { Command } from 'commander';
import { newOwnerSchema, passwordResetSchema } from '../../server/owners/schema';
import { OwnerView } from '../../server/owners/view';
import { validateInput } from '../../server/validation';
import { BUSINESS_QUESTION, withContext } from '../context';
import { UsageError } from '../errors';
import { positiveId } from '../options';
import { examples, output, table } from '../output';
import { ask, ensureOptions, isInteractive, readStandardInput } from '../prompt';
import { groupCommand } from './groups';

/** The password from standard input (`--password-stdin`, one line) or asked twice, masked, on a terminal. Never an argument. */
async function readPassword(fromStdin: boolean | undefined): Promise<string> {
  if (fromStdin) return (await readStandardInput()).replace(/\r?\n$/, '');
  if (!isInteractive()) throw new UsageError('give the password on standard input with --password-stdin');
  const first = await ask('Password', '', { secret: true });
  const again = await ask('Password again', '', { secret: true });
  if (first !== again) throw new UsageError('the passwords differ');
  return first;
}

export function ownersCommand(): Command {
  const owners = groupCommand('owners');

  owners
    .command('create')
    .description('Add an owner to a business')
    .option('--business <id>', 'business id')
    .option('--email <email>', 'the owner\'s e-mail (unique across businesses)')
    .option('--password-stdin', 'read the password from standard input')
    .option('--json', 'machine-readable output: { id, business_id, email, created_at }')
    .addHelpText(
      'after',
      examples('invoicing owners create --business 3 --email ada@acme.example', "printf '%s' \"$OWNER_PASSWORD\" | invoicing owners create --business 3 --email ada@acme.example --password-stdin"),
    )
    .action(async (raw: { business?: string; email?: string; passwordStdin?: boolean; json?: boolean }) => {
      const opts = await ensureOptions(raw, [
        BUSINESS_QUESTION,
        { key: 'email', flag: '--email', message: 'E-mail' },
      ]);
      const businessId = positiveId(String(opts.business), '--business');
      const password = await readPassword(opts.passwordStdin);
      const owner: OwnerView = await withContext(({ services }) => services.owners.create(validateInput(newOwnerSchema, { businessId, email: String(opts.email), password })));
      output(opts.json, owner, () => [`Created owner ${owner.id} (${owner.email}) for business ${owner.business_id}`]);
    });

  owners
    .command('list')
    .description('The owners of a business')
    .option('--business <id>', 'business id')
    .option('--json', 'machine-readable output')
    .addHelpText('after', examples('invoicing owners list --business 3'))
    .action(async (raw: { business?: string; json?: boolean }) => {
      const opts = await ensureOptions(raw, [BUSINESS_QUESTION]);
      const list = await withContext(({ services }) => services.owners.list(positiveId(String(opts.business), '--business')));
      output(opts.json, list, () => (list.length ? table(['ID', 'EMAIL', 'CREATED'], list.map((o) => [String(o.id), o.email, o.created_at])) : ['This business has no owners']));
    });

  owners
    .command('reset-password <id>')
    .description('Set a new password for an owner; it signs the owner out of every consent-page session')
    .option('--password-stdin', 'read the password from standard input')
    .option('--json', 'machine-readable output')
    .addHelpText('after', examples('invoicing owners reset-password 4', "printf '%s' \"$NEW_PASSWORD\" | invoicing owners reset-password 4 --password-stdin"))
    .action(async (rawId: string, opts: { passwordStdin?: boolean; json?: boolean }) => {
      const id = positiveId(rawId, 'owner id');
      const password = await readPassword(opts.passwordStdin);
      const owner = await withContext(({ services }) => services.owners.resetPassword(id, validateInput(passwordResetSchema, { password }).password));
      output(opts.json, owner, () => [`New password set for owner ${owner.id} (${owner.email})`]);
    });

  return owners;
}
