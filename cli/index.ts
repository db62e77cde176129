/** The `invoicing` program: commands, and the mapping of errors to messages and exit codes. */
import { Command, CommanderError } from 'commander';
import { describeConfig } from '../server/config';
import { isDatabaseBusy } from '../server/db/errors';
import { AppError } from '../server/errors';
import { businessCommand } from './commands/business';
import { contractsCommand } from './commands/contracts';
import { oauthCommand } from './commands/oauth';
import { ownersCommand } from './commands/owners';
import { migrateCommand } from './commands/database';
import { keysCommand } from './commands/keys';
import { paymentsCommand } from './commands/payments';
import { refundsCommand } from './commands/refunds';
import { serveCommand } from './commands/serve';
import { webhooksCommand } from './commands/webhooks';
import { wooCommand } from './commands/woo';
import { redactUrls } from './context';
import { CliFailure, EXIT_FAILURE, EXIT_USAGE, UsageError } from './errors';
import { initCommand } from './commands/init';
import { triggerCommand } from './commands/trigger';

/** A setting's default as shown in help: a string as it is, anything else (numbers, booleans) as JSON. */
const shownDefault = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

function environmentHelp(): string {
  const rows = describeConfig().map(({ key, doc, default: value }) => `  ${key.padEnd(26)}${doc}${value === undefined ? '' : ` (default: ${shownDefault(value)})`}`);
  return `\nEnvironment:\n${rows.join('\n')}`;
}

export function buildProgram(): Command {
  const program = new Command('invoicing')
    .description('Partner invoicing API: server and admin tools')
    .showHelpAfterError()
    .exitOverride()
    .addHelpText('after', environmentHelp);
  for (const command of [initCommand(), migrateCommand(), serveCommand(), businessCommand(), keysCommand(), contractsCommand(), oauthCommand(), ownersCommand(), paymentsCommand(), refundsCommand(), webhooksCommand(), triggerCommand(), wooCommand()]) {
    // Added commands do not inherit exitOverride: every level throws, and run() picks the exit code.
    command.exitOverride().commands.forEach((sub: Command) => sub.exitOverride());
    program.addCommand(command);
  }
  return program;
}

/** Service fields whose flag is not their name in kebab case. */
const FLAG_OF_FIELD: Record<string, string> = { businessId: '--business', keyId: '--key', appId: '--app' };

/** The flag a service's field error is about: `webhookSecret` and `webhook_url` → `--webhook-secret`, `--webhook-url`. */
export function flagOf(field: string): string {
  return FLAG_OF_FIELD[field] ?? `--${field.replace(/([a-z0-9])([A-Z])/g, '$1-$2').replace(/_/g, '-').toLowerCase()}`;
}

/**
 * An error of the services as a person at the command line reads it: field errors name the flag
 * they were given with (`--webhook-secret: must be…`), never a field of the code.
 */
function describe(err: AppError): string {
  if (!err.details) return err.message;
  const lines = Object.entries(err.details).map(([field, messages]) => {
    const flag = flagOf(field);
    const said = messages.map((message) => message.split(field).join(flag));
    return `\n  ${flag}: ${said.map((message) => (message.startsWith(`${flag} `) ? message.slice(flag.length + 1) : message)).join('; ')}`;
  });
  return `invalid option${lines.length > 1 ? 's' : ''}${lines.join('')}`;
}

export async function run(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      return err.exitCode === 0 || err.code === 'commander.helpDisplayed' || err.code === 'commander.version' ? 0 : EXIT_USAGE;
    }
    if (err instanceof UsageError) {
      process.stderr.write(`error: ${err.message}\n`);
      return EXIT_USAGE;
    }
    if (err instanceof CliFailure) {
      process.stderr.write(`error: ${err.message}\n`);
      return EXIT_FAILURE;
    }
    if (err instanceof AppError) {
      process.stderr.write(`error: ${describe(err)}\n`);
      return EXIT_FAILURE;
    }
    // knex's message would start with the statement: the person needs to know to try again.
    if (isDatabaseBusy(err)) {
      process.stderr.write('error: the database is busy with other writers (the server or another command held it past DATABASE_BUSY_TIMEOUT_MS): try again; nothing was written\n');
      return EXIT_FAILURE;
    }
    // Anything else: its first line only, never a stack trace, and no password from a URL.
    process.stderr.write(`error: ${redactUrls(err instanceof Error ? err.message : String(err)).split('\n')[0]}\n`);
    return EXIT_FAILURE;
  }
}
