import { Command } from 'commander';
import { currencyExponent } from '../../server/money/currencies';
import { withContext } from '../context';
import { output } from '../output';
import { ensureOptions } from '../prompt';
import { idAnswer, parseAmount, positiveId } from '../options';
import { groupCommand } from './groups';

interface SimulateOptions {
  invoice?: string;
  amount?: string;
  json?: boolean;
}

/** Major units with the currency's decimals: `4 USD` shows as `4.00 USD`. */
export function money(amount: number, currency: string): string {
  return `${amount.toFixed(currencyExponent(currency) ?? 2)} ${currency}`;
}

export function paymentsCommand(): Command {
  const payments = groupCommand('payments');

  payments
    .command('simulate')
    .description('Record a simulated payment on a test-mode invoice (of any business); fires payment.received and, when settled, invoice.paid')
    .option('--invoice <id>', 'invoice id')
    .option('--amount <amount>', 'amount in major units, e.g. 12.50 (default: the amount due)')
    .option('--json', 'machine-readable output: { payment, invoice }')
    .addHelpText(
      'after',
      `
Examples:
  $ invoicing payments simulate --invoice 17
  $ invoicing payments simulate --invoice 17 --amount 25.50 --json

The running server delivers the events' webhooks.`,
    )
    .action(async (raw: SimulateOptions) => {
      const opts = await ensureOptions(raw, [{ key: 'invoice', flag: '--invoice', message: 'Invoice id', check: idAnswer }]);
      const id = positiveId(String(opts.invoice).trim(), '--invoice');
      const amount = opts.amount === undefined ? undefined : parseAmount(opts.amount);
      const result = await withContext(({ services }) => services.paymentPath.simulateForOwner(id, amount));
      const { payment, invoice } = result;
      output(opts.json, result, () => [
        `Recorded simulated payment ${payment.id} of ${money(payment.amount, payment.currency)} on invoice ${invoice.id}${invoice.number ? ` (${invoice.number})` : ''}`,
        `Invoice status: ${invoice.status}; amount due: ${money(invoice.amount_due, invoice.currency)}`,
      ]);
    });

  return payments;
}
