/** `invoicing credit-notes create|list`: credit notes of a business's invoices, through the service the API uses. */
import { Command } from 'commander';
import type { CreditNoteInput, CreditNoteLineInput, CreditNoteResult, CreditNoteView } from '../../server/credit-notes/schema';
import { BUSINESS_QUESTION, MODE_QUESTION, withContext } from '../context';
import { UsageError } from '../errors';
import { idAnswer, parseMode, positiveId, validBody } from '../options';
import { examples, output, shortTime, table } from '../output';
import { ensureOptions } from '../prompt';
import { groupCommand } from './groups';
import { money } from './payments';

interface CreateOptions {
  business?: string;
  mode?: string;
  invoice?: string;
  line: string[];
  amount?: string;
  description?: string;
  taxRate: string[];
  reason?: string;
  memo?: string;
  refund?: boolean;
  json?: boolean;
}

interface ListOptions {
  business?: string;
  mode?: string;
  invoice?: string;
  json?: boolean;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** The flag a field of the body came from: the lines from --line, or from --amount for the note's own. */
function flagOf(field: string): string {
  if (field === 'reason' || field === 'memo') return `--${field}`;
  if (/^items\.\d+\.(unit_price|description|tax_rate_ids)/.test(field)) return '--amount';
  return field.startsWith('items') ? '--line' : field;
}

/** `--line 12` or `--line 12:0.5`: an invoice line, in full or that quantity of it. */
function copiedLine(value: string): CreditNoteLineInput {
  const match = /^\s*(\d+)\s*(?::\s*([0-9]+(?:\.[0-9]+)?)\s*)?$/.exec(value);
  if (!match) throw new UsageError(`--line must be an invoice line id, optionally with a quantity (12 or 12:0.5), got "${value}"`);
  return { invoice_item_id: positiveId(match[1], '--line'), ...(match[2] === undefined ? {} : { quantity: Number(match[2]) }) };
}

/**
 * The body the API would take, checked by its schema (server/credit-notes/schema.ts), which is
 * required when the command runs so that `--help` loads none of the server. Without `--line` or
 * `--amount` the note credits what is left of every line (`rest`).
 */
function validInput(opts: CreateOptions, rest: CreditNoteLineInput[] | null): CreditNoteInput {
  if ((opts.amount === undefined) !== (opts.description === undefined)) throw new UsageError('give --amount and --description together (a line of the credit note\'s own)');
  if (opts.taxRate.length && opts.amount === undefined) throw new UsageError('--tax-rate goes with --amount (an invoice line keeps its own rates)');
  const own = opts.amount === undefined ? [] : [{ description: opts.description!, quantity: 1, unit_price: Number(opts.amount), tax_rate_ids: opts.taxRate.map((id) => positiveId(id, '--tax-rate')) }];
  const input = {
    items: [...(rest ?? opts.line.map(copiedLine)), ...own],
    ...(opts.reason === undefined ? {} : { reason: opts.reason }),
    ...(opts.memo === undefined ? {} : { memo: opts.memo }),
    refund: Boolean(opts.refund),
  };
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- required when the command runs (see above)
  const { createCreditNoteBody } = require('../../server/credit-notes/schema') as typeof import('../../server/credit-notes/schema');
  return validBody(createCreditNoteBody, input, flagOf);
}

function createdLines({ credit_note: note, invoice }: CreditNoteResult): string[] {
  const amount = (value: number) => money(value, note.currency);
  return [
    `Created ${note.livemode ? 'live' : 'test'} credit note ${note.number} (id ${note.id}) on invoice ${invoice.number}: ${amount(note.total)}`,
    ...(note.amount_applied > 0 ? [`Taken off the amount due: ${amount(note.amount_applied)}`] : []),
    ...(note.amount_refunded > 0 ? [`Refunded from its payments: ${amount(note.amount_refunded)} (refunds ${note.refund_ids.join(', ')})`] : []),
    ...(note.out_of_band_amount > 0 ? [`Settled outside the service: ${amount(note.out_of_band_amount)}`] : []),
    `Invoice ${invoice.number} is ${invoice.status}; amount due ${amount(invoice.amount_due)}`,
  ];
}

function listLines(notes: CreditNoteView[], more: boolean): string[] {
  if (!notes.length) return ['No credit notes'];
  return [
    ...table(
      ['ID', 'MODE', 'NUMBER', 'INVOICE', 'TOTAL', 'APPLIED', 'REFUNDED', 'OUT OF BAND', 'REASON', 'CREATED'],
      notes.map((n) => [
        String(n.id),
        n.livemode ? 'live' : 'test',
        n.number,
        String(n.invoice_id),
        money(n.total, n.currency),
        money(n.amount_applied, n.currency),
        money(n.amount_refunded, n.currency),
        money(n.out_of_band_amount, n.currency),
        n.reason ?? '',
        shortTime(n.created_at),
      ]),
    ),
    ...(more ? ['More credit notes than shown: narrow with --mode or --invoice, or page through GET /credit-notes.'] : []),
  ];
}


export function creditNotesCommand(): Command {
  const creditNotes = groupCommand('credit-notes');

  creditNotes
    .command('create')
    .description('Credit an issued invoice with a numbered credit note: some of its lines, a line of its own, or (by default) all that is left of it')
    .option('--business <id>', 'business id')
    .option('--mode <mode>', 'test or live')
    .option('--invoice <id>', 'the invoice to credit')
    .option('--line <id[:quantity]>', 'an invoice line to credit, in full or that quantity of it (repeatable)', collect, [])
    .option('--amount <amount>', 'a line of the credit note\'s own, in major units (with --description)')
    .option('--description <text>', 'the description of that line')
    .option('--tax-rate <id>', 'a tax rate of that line (repeatable)', collect, [])
    .option('--reason <reason>', 'duplicate, fraudulent, order_change, product_unsatisfactory or other')
    .option('--memo <text>', 'printed on the credit note')
    .option('--refund', 'refund what it does not take off the amount due from the invoice\'s payments (default: settled outside the service)')
    .option('--json', 'machine-readable output: { credit_note, invoice }, as POST /invoices/{id}/credit-notes answers')
    .addHelpText(
      'after',
      examples(
        'invoicing credit-notes create --business 1 --mode test --invoice 42',
        'invoicing credit-notes create --business 1 --mode live --invoice 42 --line 108:1 --reason product_unsatisfactory --refund',
        'invoicing credit-notes create --business 1 --mode live --invoice 42 --amount 15 --description "Late delivery discount" --tax-rate 3 --json',
      ),
    )
    .action(async (raw: CreateOptions) => {
      const opts = await ensureOptions(raw, [BUSINESS_QUESTION, MODE_QUESTION, { key: 'invoice', flag: '--invoice', message: 'Invoice id', check: idAnswer }]);
      const businessId = positiveId(String(opts.business).trim(), '--business');
      const mode = parseMode(opts.mode!);
      const invoiceId = positiveId(String(opts.invoice).trim(), '--invoice');
      const wholeRest = !opts.line.length && opts.amount === undefined;
      if (!wholeRest) validInput(opts, null);
      const result = await withContext(async ({ services }) => {
        const rest = wholeRest ? await services.creditNotes.remainingLinesForOwner(businessId, mode, invoiceId) : null;
        if (rest && !rest.length) throw new UsageError(`every line of invoice ${invoiceId} has been credited in full already`);
        return services.creditNotes.createForOwner(businessId, mode, invoiceId, validInput(opts, rest));
      });
      output(opts.json, result, () => createdLines(result));
    });

  creditNotes
    .command('list')
    .description('List the credit notes of a business, oldest first (100 per mode at most; the API pages through more)')
    .option('--business <id>', 'business id')
    .option('--mode <mode>', 'live or test (default: both)')
    .option('--invoice <id>', 'only the credit notes of this invoice')
    .option('--json', 'machine-readable output: { data: [credit note, …], more } (credit note as GET /credit-notes/{id})')
    .addHelpText('after', examples('invoicing credit-notes list --business 1', 'invoicing credit-notes list --business 1 --mode live --invoice 42 --json'))
    .action(async (raw: ListOptions) => {
      const opts = await ensureOptions(raw, [BUSINESS_QUESTION]);
      const businessId = positiveId(String(opts.business).trim(), '--business');
      const filters = {
        ...(opts.mode === undefined ? {} : { mode: parseMode(opts.mode) }),
        ...(opts.invoice === undefined ? {} : { invoice_id: positiveId(opts.invoice, '--invoice') }),
      };
      const list = await withContext(({ services }) => services.creditNotes.listForOwner(businessId, filters));
      output(opts.json, list, () => listLines(list.data, list.more));
    });

  return creditNotes;
}
