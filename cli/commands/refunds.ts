/** `invoicing refunds list`: a business's refunds, pending ones (outcome at the gateway not known yet) included. */
import { Command } from 'commander';
import { REFUND_STATUSES, RefundStatus } from '../../server/refunds/model';
import { BUSINESS_QUESTION, withContext } from '../context';
import { UsageError } from '../errors';
import { examples, output, shortTime, table } from '../output';
import { parseMode, positiveId } from '../options';
import { ensureOptions } from '../prompt';
import { money } from './payments';
import { groupCommand } from './groups';

interface ListOptions {
  business?: string;
  mode?: string;
  status?: string;
  payment?: string;
  invoice?: string;
  json?: boolean;
}

export function refundsCommand(): Command {
  const refunds = groupCommand('refunds');

  refunds
    .command('list')
    .description('List the refunds of a business, oldest first (100 per mode at most; the API pages through more)')
    .option('--business <id>', 'business id')
    .option('--mode <mode>', 'live or test (default: both)')
    .option('--status <status>', `only refunds in this status (${REFUND_STATUSES.join(', ')}); pending: its outcome at the gateway is not known yet, the reconciliation settles it`)
    .option('--payment <id>', 'only refunds of this payment')
    .option('--invoice <id>', 'only refunds of this invoice')
    .option('--json', 'machine-readable output: { data: [refund, …], more } (refund as GET /refunds/{id})')
    .addHelpText('after', examples('invoicing refunds list --business 1', 'invoicing refunds list --business 1 --status pending --json', 'invoicing refunds list --business 1 --mode live --invoice 42'))
    .action(async (raw: ListOptions) => {
      const opts = await ensureOptions(raw, [BUSINESS_QUESTION]);
      const businessId = positiveId(String(opts.business).trim(), '--business');
      if (opts.status !== undefined && !(REFUND_STATUSES as readonly string[]).includes(opts.status)) throw new UsageError(`--status must be one of ${REFUND_STATUSES.join(', ')}`);
      const filters = {
        ...(opts.mode === undefined ? {} : { mode: parseMode(opts.mode) }),
        ...(opts.status === undefined ? {} : { status: opts.status as RefundStatus }),
        ...(opts.payment === undefined ? {} : { payment_id: positiveId(opts.payment, '--payment') }),
        ...(opts.invoice === undefined ? {} : { invoice_id: positiveId(opts.invoice, '--invoice') }),
      };
      const list = await withContext(({ services }) => services.refunds.listForOwner(businessId, filters));
      output(opts.json, list, () => {
        if (!list.data.length) return [`No refunds for business ${businessId}${opts.status ? ` in status ${opts.status}` : ''}.`];
        const rows = list.data.map((r) => [
          String(r.id),
          r.livemode ? 'live' : 'test',
          String(r.payment_id),
          String(r.invoice_id),
          money(r.amount, r.currency),
          r.status,
          r.gateway_reference ?? '-',
          shortTime(r.created_at),
          r.failure_reason ?? r.reason ?? '',
        ]);
        return [
          ...table(['ID', 'MODE', 'PAYMENT', 'INVOICE', 'AMOUNT', 'STATUS', 'GATEWAY REF', 'CREATED', 'REASON'], rows),
          ...(list.more ? ['More refunds than shown: narrow with --status, --payment or --invoice, or page through GET /refunds.'] : []),
        ];
      });
    });

  return refunds;
}
