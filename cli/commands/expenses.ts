/** `invoicing expenses import FILE`: a received e-invoice as an expense of a business, through the service the API uses. */
import fs from 'node:fs';
import { Command } from 'commander';
import { MAX_DOCUMENT_BYTES } from '../../server/expenses/received-document';
import type { ExpenseView } from '../../server/expenses/schema';
import { BUSINESS_QUESTION, MODE_QUESTION, withContext } from '../context';
import { CliFailure } from '../errors';
import { parseMode, positiveId, validBody } from '../options';
import { examples, output } from '../output';
import { ensureOptions } from '../prompt';
import { groupCommand } from './groups';
import { money } from './payments';

interface ImportOptions {
  business?: string;
  mode?: string;
  category?: string;
  json?: boolean;
}

/** The file's bytes and media type: a PDF by its header, else XML. */
function documentIn(file: string): { mediaType: 'application/xml' | 'application/pdf'; bytes: Buffer } {
  let bytes: Buffer;
  try {
    // As POST /expenses/import takes it.
    if (fs.statSync(file).size > MAX_DOCUMENT_BYTES) throw new CliFailure(`${file} is larger than ${MAX_DOCUMENT_BYTES / 1024 / 1024} MB: no e-invoice is`);
    bytes = fs.readFileSync(file);
  } catch (err) {
    if (err instanceof CliFailure) throw err;
    throw new CliFailure(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
  }
  return { mediaType: bytes.subarray(0, 1024).includes('%PDF-') ? 'application/pdf' : 'application/xml', bytes };
}

function importedLines(expense: ExpenseView): string[] {
  const tax = expense.tax_amount === null ? '' : ` (tax ${money(expense.tax_amount, expense.currency)})`;
  return [
    `Imported ${expense.livemode ? 'live' : 'test'} expense ${expense.id}: invoice ${expense.document_number} of ${expense.vendor}${expense.vendor_tax_id ? ` (${expense.vendor_tax_id})` : ''}`,
    `${money(expense.amount, expense.currency)}${tax}, dated ${expense.date}, category ${expense.category}`,
    ...(expense.description ? [expense.description] : []),
  ];
}

export function expensesCommand(): Command {
  const expenses = groupCommand('expenses');

  expenses
    .command('import <file>')
    .description('Import a received e-invoice as an expense: UBL or CII XML, or a Factur-X / ZUGFeRD PDF (at most 10 MB); the same invoice twice is refused, naming its expense')
    .option('--business <id>', 'business id')
    .option('--mode <mode>', 'test or live')
    .option('--category <slug>', 'the expense\'s category, a lower-case slug (default: other)')
    .option('--json', 'machine-readable output: the expense, as POST /expenses/import answers it')
    .addHelpText(
      'after',
      examples(
        'invoicing expenses import invoice.xml --business 1 --mode live',
        'invoicing expenses import factur-x.pdf --business 1 --mode test --category office-supplies --json',
      ),
    )
    .action(async (file: string, raw: ImportOptions) => {
      const opts = await ensureOptions(raw, [BUSINESS_QUESTION, MODE_QUESTION]);
      const businessId = positiveId(String(opts.business).trim(), '--business');
      const mode = parseMode(opts.mode!);
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- required when the command runs, so that --help loads none of the server
      const { importExpenseQuery, DuplicateDocument, InvalidDocument, UnsupportedDocument } = require('../../server/expenses/schema') as typeof import('../../server/expenses/schema');
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- as above
      const { ValidationFailed } = require('../../server/errors') as typeof import('../../server/errors');
      const { category } = validBody(importExpenseQuery, opts.category === undefined ? {} : { category: opts.category }, () => '--category');
      const document = documentIn(file);
      const expense = await withContext(async ({ services }) => {
        try {
          return await services.expenses.importForOwner(businessId, mode, document, category);
        } catch (err) {
          // What the document lacks or misstates is the file's doing, not an option's: one line naming each term.
          if (err instanceof ValidationFailed) {
            const terms = Object.entries(err.details ?? {}).map(([term, messages]) => `${term} ${messages.join('; ')}`);
            throw new CliFailure(`${file}: the e-invoice lacks or misstates what an expense needs: ${terms.join('; ')}`);
          }
          if (err instanceof DuplicateDocument || err instanceof InvalidDocument || err instanceof UnsupportedDocument) throw new CliFailure(`${file}: ${err.message}`);
          throw err;
        } finally {
          await services.expenses.close();
        }
      });
      output(opts.json, expense, () => importedLines(expense));
    });

  return expenses;
}
