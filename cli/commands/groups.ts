/**
 * The program's top-level commands, each loaded only when it runs: a command's module pulls in the
 * services, the database drivers and the server (about 1.5 s), which `--help`, `--version` or any
 * other command has no use for. What the program's own help lists about a command (its name, its
 * summary, and the term it is listed under) lives here, light; each module starts from `groupCommand`.
 */
import { Command } from 'commander';

export interface CommandGroup {
  name: string;
  /** As the program's help lists it: the name with `[options]` and the arguments the command takes. */
  term: string;
  summary: string;
  /** Builds the command, loading its module (synchronous, so the whole program can be built at once for its tests). */
  load(): Command;
}

/* eslint-disable @typescript-eslint/no-require-imports -- a module is required when its command runs, not when the program starts */
export const COMMAND_GROUPS: readonly CommandGroup[] = [
  {
    name: 'init',
    term: 'init [options]',
    summary: 'Guided first run: migrate the database, create a business and a test key, and show a first API call',
    load: () => (require('./init') as typeof import('./init')).initCommand(),
  },
  { name: 'migrate', term: 'migrate [options]', summary: 'Apply pending database migrations (DATABASE_URL)', load: () => (require('./database') as typeof import('./database')).migrateCommand() },
  { name: 'serve', term: 'serve [options]', summary: 'Run the partner API (migrates the embedded SQLite database by itself)', load: () => (require('./serve') as typeof import('./serve')).serveCommand() },
  { name: 'business', term: 'business', summary: 'Manage businesses', load: () => (require('./business') as typeof import('./business')).businessCommand() },
  {
    name: 'keys',
    term: 'keys',
    summary: 'Manage the API keys of a business (key values are shown only when created)',
    load: () => (require('./keys') as typeof import('./keys')).keysCommand(),
  },
  { name: 'contracts', term: 'contracts', summary: 'Contracts and proposals', load: () => (require('./contracts') as typeof import('./contracts')).contractsCommand() },
  { name: 'oauth', term: 'oauth', summary: 'OAuth apps of platforms, and what businesses have authorized', load: () => (require('./oauth') as typeof import('./oauth')).oauthCommand() },
  { name: 'owners', term: 'owners', summary: 'The people who sign in to approve OAuth apps for a business', load: () => (require('./owners') as typeof import('./owners')).ownersCommand() },
  { name: 'payments', term: 'payments', summary: 'Test-mode payments', load: () => (require('./payments') as typeof import('./payments')).paymentsCommand() },
  {
    name: 'refunds',
    term: 'refunds',
    summary: 'Refunds of payments (made through the API, at the gateway, or of an overpayment)',
    load: () => (require('./refunds') as typeof import('./refunds')).refundsCommand(),
  },
  {
    name: 'credit-notes',
    term: 'credit-notes',
    summary: 'Credit notes: numbered corrections of issued invoices, refunded or settled outside',
    load: () => (require('./credit-notes') as typeof import('./credit-notes')).creditNotesCommand(),
  },
  {
    name: 'tax-rates',
    term: 'tax-rates',
    summary: 'Tax rates of a business (percentages and VAT categories put on invoice lines)',
    load: () => (require('./tax-rates') as typeof import('./tax-rates')).taxRatesCommand(),
  },
  {
    name: 'recurring',
    term: 'recurring',
    summary: 'Recurring invoices: one invoice of the same lines to a client on each date (week, month, quarter, year)',
    load: () => (require('./recurring') as typeof import('./recurring')).recurringCommand(),
  },
  {
    name: 'expenses',
    term: 'expenses',
    summary: 'Expenses: import a received e-invoice (UBL, CII or Factur-X) as one',
    load: () => (require('./expenses') as typeof import('./expenses')).expensesCommand(),
  },
  { name: 'webhooks', term: 'webhooks', summary: 'Inspect and replay webhook deliveries (of every business)', load: () => (require('./webhooks') as typeof import('./webhooks')).webhooksCommand() },
  {
    name: 'clock',
    term: 'clock',
    summary: "A business's test-mode clock: show it, or advance it, running what falls due on the way",
    load: () => (require('./clock') as typeof import('./clock')).clockCommand(),
  },
  {
    name: 'trigger',
    term: 'trigger [options] [event-type]',
    summary: 'Make an event happen in test mode, creating what it needs through the same services as the API; the running server delivers it',
    load: () => (require('./trigger') as typeof import('./trigger')).triggerCommand(),
  },
  {
    name: 'woo',
    term: 'woo',
    summary: 'WooCommerce stores: connect one with a link, or run the bridge apart; every completed order becomes one invoice, paid, refunded or void as the order is',
    load: () => (require('./woo') as typeof import('./woo')).wooCommand(),
  },
];
/* eslint-enable @typescript-eslint/no-require-imports */

/** The command a group's module builds on: its name and the summary the program's help shows for it. */
export function groupCommand(name: string): Command {
  const group = COMMAND_GROUPS.find((g) => g.name === name);
  if (!group) throw new Error(`no command group ${name}`);
  return new Command(name).description(group.summary);
}

/** A command as the program's help lists it, without loading it; running it is never reached (see run()). */
export function listedCommand(group: CommandGroup): Command {
  return new Command(group.name).description(group.summary).allowUnknownOption().allowExcessArguments();
}
