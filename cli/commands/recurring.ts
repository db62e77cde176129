/** `invoicing recurring create|list|show|pause|resume|cancel`: a business's recurring invoices, through the service the API uses. */
import { Command } from 'commander';
import type { RecurringInvoiceInput, RecurringInvoiceView } from '../../server/recurring-invoices/schema';
import { BUSINESS_QUESTION, MODE_QUESTION, withContext } from '../context';
import { UsageError } from '../errors';
import { idAnswer, parseMode, positiveId, refusedAsUsage, validBody } from '../options';
import { examples, output, paint, table } from '../output';
import { ensureOptions } from '../prompt';
import { groupCommand } from './groups';
import { money } from './payments';

interface TenantOptions {
  business?: string;
  mode?: string;
  json?: boolean;
}

interface CreateOptions extends TenantOptions {
  client?: string;
  currency?: string;
  item: string[];
  taxRate: string[];
  interval?: string;
  every?: string;
  start?: string;
  end?: string;
  daysUntilDue?: string;
  autoSend: boolean;
}

interface ListOptions extends TenantOptions {
  status?: string;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** The flag each field of the body is given with. */
const FLAG_OF_FIELD: Record<string, string> = {
  client_id: '--client',
  currency: '--currency',
  items: '--item',
  default_tax_rate_ids: '--tax-rate',
  interval: '--interval',
  interval_count: '--every',
  start_date: '--start',
  end_date: '--end',
  days_until_due: '--days-until-due',
  auto_send: '--no-auto-send',
};

const flagOf = (field: string) => (field.startsWith('items') ? '--item' : (FLAG_OF_FIELD[field] ?? field));

/** `--item "Retainer:1:80"`: the description (which may hold colons), the quantity and the unit price. */
function parseItem(value: string): { description: string; quantity: number; unit_price: number } {
  const match = /^(.+):\s*([0-9]+(?:\.[0-9]+)?)\s*:\s*(-?[0-9]+(?:\.[0-9]+)?)\s*$/.exec(value);
  if (!match) throw new UsageError(`--item must be DESCRIPTION:QUANTITY:UNIT_PRICE, e.g. "Retainer:1:80", got "${value}"`);
  return { description: match[1].trim(), quantity: Number(match[2]), unit_price: Number(match[3]) };
}

/** A whole number option (`--every`, `--days-until-due`); the schema checks its range. */
function wholeNumber(value: string, flag: string): number {
  if (!/^\s*[0-9]{1,6}\s*$/.test(value)) throw new UsageError(`${flag} must be a whole number, not "${value}"`);
  return Number(value);
}

/**
 * The body the API would take, checked by its schema (server/recurring-invoices/schema.ts), required
 * when the command runs so that `--help` loads none of the server.
 */
function validInput(opts: CreateOptions): RecurringInvoiceInput {
  if (!opts.item.length) throw new UsageError('give at least one --item DESCRIPTION:QUANTITY:UNIT_PRICE');
  const input = {
    client_id: positiveId(opts.client!, '--client'),
    currency: opts.currency,
    items: opts.item.map(parseItem),
    ...(opts.taxRate.length ? { default_tax_rate_ids: opts.taxRate.map((id) => positiveId(id, '--tax-rate')) } : {}),
    interval: opts.interval,
    ...(opts.every === undefined ? {} : { interval_count: wholeNumber(opts.every, '--every') }),
    start_date: opts.start,
    ...(opts.end === undefined ? {} : { end_date: opts.end }),
    days_until_due: wholeNumber(opts.daysUntilDue!, '--days-until-due'),
    auto_send: opts.autoSend,
  };
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- required when the command runs (see above)
  const { createRecurringInvoiceBody } = require('../../server/recurring-invoices/schema') as typeof import('../../server/recurring-invoices/schema');
  return validBody(createRecurringInvoiceBody, input, flagOf);
}

/** `every month`, `every 2 weeks`. */
function cadenceText(r: RecurringInvoiceView): string {
  return r.interval_count === 1 ? `every ${r.interval}` : `every ${r.interval_count} ${r.interval}s`;
}

function statusText(r: RecurringInvoiceView): string {
  const colour = r.status === 'active' ? 'green' : r.status === 'paused' ? 'yellow' : 'gray';
  return paint(colour, r.status);
}

function scheduleLines(verb: string, r: RecurringInvoiceView): string[] {
  return [
    `${verb} ${r.livemode ? 'live' : 'test'} recurring invoice ${r.id} for client ${r.client_id}: ${cadenceText(r)} from ${r.start_date}${r.end_date ? ` to ${r.end_date}` : ''}, due ${r.days_until_due} days after each date`,
    ...r.items.map((item) => `  ${item.quantity} × ${item.description} at ${money(item.unit_price, r.currency)}`),
    `Status: ${statusText(r)}${r.next_issue_date ? `; next invoice on ${r.next_issue_date}` : ''}; ${r.auto_send ? 'e-mailed to the client' : 'issued without an e-mail'}`,
    `Invoices issued: ${r.invoice_ids.length ? r.invoice_ids.join(', ') : 'none yet'}`,
  ];
}

function listLines(schedules: RecurringInvoiceView[], more: boolean): string[] {
  if (!schedules.length) return ['No recurring invoices'];
  return [
    ...table(
      ['ID', 'MODE', 'CLIENT', 'CURRENCY', 'EVERY', 'NEXT', 'STATUS', 'INVOICES', 'E-MAIL'],
      schedules.map((r) => [
        String(r.id),
        r.livemode ? 'live' : 'test',
        String(r.client_id),
        r.currency,
        cadenceText(r).replace(/^every /, ''),
        r.next_issue_date ?? '-',
        statusText(r),
        String(r.invoice_ids.length),
        r.auto_send ? 'yes' : 'no',
      ]),
    ),
    ...(more ? ['More recurring invoices than shown: narrow with --mode or --status, or page through GET /recurring-invoices.'] : []),
  ];
}

const STATUSES = ['active', 'paused', 'ended'] as const;

function parseStatus(value: string): (typeof STATUSES)[number] {
  const status = STATUSES.find((s) => s === value.trim());
  if (!status) throw new UsageError(`--status must be active, paused or ended, not "${value}"`);
  return status;
}

/** The business, mode and schedule id every one-schedule command takes. */
async function oneSchedule(rawId: string, raw: TenantOptions): Promise<{ businessId: number; mode: 'test' | 'live'; id: number; json?: boolean }> {
  const id = positiveId(rawId, 'recurring invoice id');
  const opts = await ensureOptions(raw, [BUSINESS_QUESTION, MODE_QUESTION]);
  return { businessId: positiveId(String(opts.business).trim(), '--business'), mode: parseMode(opts.mode!), id, json: opts.json };
}

export function recurringCommand(): Command {
  const recurring = groupCommand('recurring');

  recurring
    .command('create')
    .description('Create a recurring invoice: one invoice of the same lines to a client on each date, issued by the running server')
    .option('--business <id>', 'business id')
    .option('--mode <mode>', 'test or live')
    .option('--client <id>', 'the client invoiced')
    .option('--currency <code>', 'ISO 4217 code, e.g. USD')
    .option('--item <description:quantity:price>', 'a line of every invoice, the price in major units (repeatable)', collect, [])
    .option('--tax-rate <id>', 'a default tax rate of the lines (repeatable)', collect, [])
    .option('--interval <interval>', 'week, month, quarter or year')
    .option('--every <n>', 'issue every n intervals (default 1; at most a year in all)')
    .option('--start <date>', 'the first issue date, YYYY-MM-DD (UTC), today or later')
    .option('--end <date>', 'the last date that may be issued, YYYY-MM-DD (default: no end)')
    .option('--days-until-due <days>', 'each invoice is due this many days after its date')
    .option('--no-auto-send', 'issue each invoice (numbered, sent, with its payment link) without e-mailing it')
    .option('--json', 'machine-readable output: the recurring invoice, as GET /recurring-invoices/{id} shows it')
    .addHelpText(
      'after',
      examples(
        'invoicing recurring create --business 1 --mode test --client 3 --currency USD --item "Retainer:1:800" --interval month --start 2027-01-31 --days-until-due 14',
        'invoicing recurring create --business 1 --mode live --client 3 --currency EUR --item "Hosting:2:10" --item "Support:1:40" --tax-rate 2 --interval week --every 2 --start 2027-01-04 --end 2027-12-31 --days-until-due 7 --no-auto-send --json',
      ),
    )
    .action(async (raw: CreateOptions) => {
      const opts = await ensureOptions(raw, [
        BUSINESS_QUESTION,
        MODE_QUESTION,
        { key: 'client', flag: '--client', message: 'Client id', check: idAnswer },
        { key: 'currency', flag: '--currency', message: 'Currency' },
        { key: 'interval', flag: '--interval', message: 'Interval', choices: ['week', 'month', 'quarter', 'year'] },
        { key: 'start', flag: '--start', message: 'First issue date (YYYY-MM-DD)' },
        { key: 'daysUntilDue', flag: '--days-until-due', message: 'Days until due' },
      ]);
      const businessId = positiveId(String(opts.business).trim(), '--business');
      const mode = parseMode(opts.mode!);
      const input = validInput(opts);
      const schedule = await withContext(({ services }) => refusedAsUsage(() => services.recurringInvoices.createForOwner(businessId, mode, input), input, flagOf));
      output(opts.json, schedule, () => scheduleLines('Created', schedule));
    });

  recurring
    .command('list')
    .description('List the recurring invoices of a business, oldest first (100 per mode at most; the API pages through more)')
    .option('--business <id>', 'business id')
    .option('--mode <mode>', 'live or test (default: both)')
    .option('--status <status>', 'only active, paused or ended ones')
    .option('--json', 'machine-readable output: { data: [recurring invoice, …], more } (as GET /recurring-invoices/{id})')
    .addHelpText('after', examples('invoicing recurring list --business 1', 'invoicing recurring list --business 1 --mode live --status active --json'))
    .action(async (raw: ListOptions) => {
      const opts = await ensureOptions(raw, [BUSINESS_QUESTION]);
      const businessId = positiveId(String(opts.business).trim(), '--business');
      const status = opts.status === undefined ? undefined : parseStatus(opts.status);
      const filters = { ...(opts.mode === undefined ? {} : { mode: parseMode(opts.mode) }), ...(status ? { status } : {}) };
      const list = await withContext(({ services }) => services.recurringInvoices.listForOwner(businessId, filters));
      output(opts.json, list, () => listLines(list.data, list.more));
    });

  recurring
    .command('show <id>')
    .description('Show a recurring invoice: its lines, its next date and the invoices it issued')
    .option('--business <id>', 'business id')
    .option('--mode <mode>', 'test or live')
    .option('--json', 'machine-readable output: the recurring invoice, as GET /recurring-invoices/{id} shows it')
    .addHelpText('after', examples('invoicing recurring show 7 --business 1 --mode test'))
    .action(async (rawId: string, raw: TenantOptions) => {
      const { businessId, mode, id, json } = await oneSchedule(rawId, raw);
      const schedule = await withContext(({ services }) => services.recurringInvoices.getForOwner(businessId, mode, id));
      output(json, schedule, () => scheduleLines('The', schedule));
    });

  recurring
    .command('pause <id>')
    .description('Pause a recurring invoice: it issues nothing until resumed, and the dates meanwhile are skipped')
    .option('--business <id>', 'business id')
    .option('--mode <mode>', 'test or live')
    .option('--json', 'machine-readable output: the recurring invoice, as GET /recurring-invoices/{id} shows it')
    .addHelpText('after', examples('invoicing recurring pause 7 --business 1 --mode live'))
    .action(async (rawId: string, raw: TenantOptions) => {
      const { businessId, mode, id, json } = await oneSchedule(rawId, raw);
      const schedule = await withContext(({ services }) => services.recurringInvoices.setStatusForOwner(businessId, mode, id, 'paused'));
      output(json, schedule, () => scheduleLines('Paused', schedule));
    });

  recurring
    .command('resume <id>')
    .description('Resume a paused recurring invoice from its first date after today (the dates it skipped are not issued)')
    .option('--business <id>', 'business id')
    .option('--mode <mode>', 'test or live')
    .option('--json', 'machine-readable output: the recurring invoice, as GET /recurring-invoices/{id} shows it')
    .addHelpText('after', examples('invoicing recurring resume 7 --business 1 --mode live'))
    .action(async (rawId: string, raw: TenantOptions) => {
      const { businessId, mode, id, json } = await oneSchedule(rawId, raw);
      const schedule = await withContext(({ services }) => services.recurringInvoices.setStatusForOwner(businessId, mode, id, 'active'));
      output(json, schedule, () => scheduleLines('Resumed', schedule));
    });

  recurring
    .command('cancel <id>')
    .description('Cancel a recurring invoice: it issues nothing more (final); its invoices stay')
    .option('--business <id>', 'business id')
    .option('--mode <mode>', 'test or live')
    .option('--json', 'machine-readable output: the recurring invoice, as GET /recurring-invoices/{id} shows it')
    .addHelpText('after', examples('invoicing recurring cancel 7 --business 1 --mode live'))
    .action(async (rawId: string, raw: TenantOptions) => {
      const { businessId, mode, id, json } = await oneSchedule(rawId, raw);
      const schedule = await withContext(({ services }) => services.recurringInvoices.cancelForOwner(businessId, mode, id));
      output(json, schedule, () => scheduleLines('Cancelled', schedule));
    });

  return recurring;
}
