/** `invoicing tax-rates create|list|archive`: a business's tax rates, per mode, through the service the API uses. */
import { Command } from 'commander';
import type { TaxRateInput, TaxRateView } from '../../server/tax-rates/schema';
import { BUSINESS_QUESTION, MODE_QUESTION, withContext } from '../context';
import { UsageError } from '../errors';
import { parseMode, positiveId, validBody } from '../options';
import { examples, output, paint, table } from '../output';
import { ensureOptions } from '../prompt';
import { groupCommand } from './groups';

interface TenantOptions {
  business?: string;
  mode?: string;
  json?: boolean;
}

interface CreateOptions extends TenantOptions {
  name?: string;
  percentage?: string;
  inclusive?: boolean;
  category?: string;
  country?: string;
  description?: string;
  exemptionReason?: string;
}

interface ListOptions extends TenantOptions {
  active?: boolean;
  archived?: boolean;
}

/** The flag each field of the body is given with. */
const FLAG_OF_FIELD: Record<string, string> = {
  display_name: '--name',
  percentage: '--percentage',
  inclusive: '--inclusive',
  category: '--category',
  country: '--country',
  description: '--description',
  exemption_reason: '--exemption-reason',
};

const CATEGORY_HELP = 'EN 16931 VAT category: S (standard, the default above 0 %), Z (zero rated, the default at 0 %), E, AE, K, G or O (each 0 %, with --exemption-reason)';

/**
 * The body the API would take, checked by the same schema (server/tax-rates/schema.ts) before the
 * database is opened. Anything it refuses is a usage error (exit 2) naming the flags. The schema is
 * required here, when the command runs, so that `--help` loads none of the server.
 */
function validInput(opts: CreateOptions): TaxRateInput {
  const raw = opts.percentage!.trim();
  if (!/^[0-9]{1,3}(\.[0-9]+)?$/.test(raw)) throw new UsageError('--percentage must be a number from 0 to 100, e.g. 19 or 8.875');
  const input = {
    display_name: opts.name,
    percentage: Number(raw),
    inclusive: Boolean(opts.inclusive),
    ...(opts.category === undefined ? {} : { category: opts.category.trim().toUpperCase() }),
    ...(opts.country === undefined ? {} : { country: opts.country.trim() }),
    ...(opts.description === undefined ? {} : { description: opts.description }),
    ...(opts.exemptionReason === undefined ? {} : { exemption_reason: opts.exemptionReason }),
  };
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- required when the command runs (see above)
  const { createTaxRateBody } = require('../../server/tax-rates/schema') as typeof import('../../server/tax-rates/schema');
  return validBody(createTaxRateBody, input, (field) => FLAG_OF_FIELD[field] ?? field);
}

/** `19 %`, `8.875 %`, `7 % incl.`. */
function percentText(rate: TaxRateView): string {
  return `${rate.percentage} %${rate.inclusive ? ' incl.' : ''}`;
}

function listLines(rates: TaxRateView[], more: boolean): string[] {
  if (!rates.length) return ['No tax rates'];
  return [
    ...table(
      ['ID', 'MODE', 'NAME', 'PERCENTAGE', 'CATEGORY', 'COUNTRY', 'STATUS', 'EXEMPTION REASON'],
      rates.map((r) => [
        String(r.id),
        r.livemode ? 'live' : 'test',
        r.display_name,
        percentText(r),
        r.category,
        r.country ?? '-',
        r.active ? paint('green', 'active') : paint('gray', 'archived'),
        r.exemption_reason ?? '',
      ]),
    ),
    ...(more ? ['More tax rates than shown: narrow with --mode, --active or --archived, or page through GET /tax-rates.'] : []),
  ];
}

function rateLines(verb: string, rate: TaxRateView): string[] {
  return [
    `${verb} ${rate.livemode ? 'live' : 'test'} tax rate ${rate.id}: ${rate.display_name}, ${percentText(rate)}, category ${rate.category}${rate.country ? `, ${rate.country}` : ''}`,
    ...(rate.exemption_reason ? [`Exemption reason: ${rate.exemption_reason}`] : []),
    ...(rate.active ? [] : ['Archived: new invoice lines cannot take it; invoices that have it keep it.']),
  ];
}


export function taxRatesCommand(): Command {
  const taxRates = groupCommand('tax-rates');

  taxRates
    .command('create')
    .description("Create a tax rate; its percentage, category and inclusive never change (archive it and make another)")
    .option('--business <id>', 'business id')
    .option('--mode <mode>', 'test or live')
    .option('--name <name>', 'the name printed on invoices, e.g. VAT')
    .option('--percentage <percent>', 'from 0 to 100, at most 4 decimals, e.g. 19 or 8.875')
    .option('--inclusive', 'line prices include this tax (default: the tax is added to them)')
    .option('--category <code>', CATEGORY_HELP)
    .option('--country <code>', 'ISO 3166-1 alpha-2 country code, e.g. DE')
    .option('--description <text>', 'for your own use, not printed on invoices')
    .option('--exemption-reason <text>', 'why no tax is charged, printed on invoices (required for E, AE, K, G and O)')
    .option('--json', 'machine-readable output: the tax rate, as GET /tax-rates/{id} shows it')
    .addHelpText(
      'after',
      examples(
        'invoicing tax-rates create --business 1 --mode test --name VAT --percentage 19 --country DE',
        'invoicing tax-rates create --business 1 --mode live --name "Sales tax NY" --percentage 8.875 --json',
        'invoicing tax-rates create --business 1 --mode live --name "Reverse charge" --percentage 0 --category AE --exemption-reason "Reverse charge"',
      ),
    )
    .action(async (raw: CreateOptions) => {
      const opts = await ensureOptions(raw, [BUSINESS_QUESTION, MODE_QUESTION, { key: 'name', flag: '--name', message: 'Name' }, { key: 'percentage', flag: '--percentage', message: 'Percentage' }]);
      const businessId = positiveId(opts.business!, '--business');
      const mode = parseMode(opts.mode!);
      const input = validInput(opts);
      const rate = await withContext(({ services }) => services.taxRates.createForOwner(businessId, mode, input));
      output(opts.json, rate, () => rateLines('Created', rate));
    });

  taxRates
    .command('list')
    .description('List the tax rates of a business, oldest first (100 per mode at most; the API pages through more)')
    .option('--business <id>', 'business id')
    .option('--mode <mode>', 'live or test (default: both)')
    .option('--active', 'only active rates')
    .option('--archived', 'only archived rates')
    .option('--json', 'machine-readable output: { data: [tax rate, …], more } (tax rate as GET /tax-rates/{id})')
    .addHelpText('after', examples('invoicing tax-rates list --business 1', 'invoicing tax-rates list --business 1 --mode live --active --json'))
    .action(async (raw: ListOptions) => {
      const opts = await ensureOptions(raw, [BUSINESS_QUESTION]);
      const businessId = positiveId(opts.business!, '--business');
      if (opts.active && opts.archived) throw new UsageError('give either --active or --archived, not both');
      const filters = {
        ...(opts.mode === undefined ? {} : { mode: parseMode(opts.mode) }),
        ...(opts.active ? { active: true } : opts.archived ? { active: false } : {}),
      };
      const list = await withContext(({ services }) => services.taxRates.listForOwner(businessId, filters));
      output(opts.json, list, () => listLines(list.data, list.more));
    });

  taxRates
    .command('archive <id>')
    .description('Archive a tax rate: new invoice lines cannot take it; invoices that have it keep it')
    .option('--business <id>', 'business id')
    .option('--mode <mode>', 'test or live')
    .option('--json', 'machine-readable output: the tax rate, as GET /tax-rates/{id} shows it')
    .addHelpText('after', examples('invoicing tax-rates archive 4 --business 1 --mode live', 'invoicing tax-rates archive 4 --business 1 --mode test --json'))
    .action(async (rawId: string, raw: TenantOptions) => {
      const id = positiveId(rawId, 'tax rate id');
      const opts = await ensureOptions(raw, [BUSINESS_QUESTION, MODE_QUESTION]);
      const businessId = positiveId(opts.business!, '--business');
      const mode = parseMode(opts.mode!);
      const rate = await withContext(({ services }) => services.taxRates.archiveForOwner(businessId, mode, id));
      output(opts.json, rate, () => rateLines('Archived', rate));
    });

  return taxRates;
}
