/**
 * `invoicing clock show|advance`: a business's test-mode clock, through the service `GET /test-clock`
 * and `POST /test-clock/advance` use. An advance runs here, in the command's process: what falls due
 * on the way is recorded before it returns, and the running server delivers the webhooks (and reads
 * the new time within KEY_CACHE_TTL_MS).
 */
import { Command } from 'commander';
import type { AdvanceTarget } from '../../server/test-clock/service';
import type { TestClockView } from '../../server/test-clock/schema';
import { BUSINESS_QUESTION, withContext } from '../context';
import { UsageError } from '../errors';
import { positiveId, validBody } from '../options';
import { examples, output, shortTime } from '../output';
import { ensureOptions } from '../prompt';
import { groupCommand } from './groups';

interface ClockOptions {
  business?: string;
  to?: string;
  json?: boolean;
}

/** The longest relative jump `+Nd` is checked against by the service (5 years); this only keeps N a number. */
const RELATIVE = /^\+([1-9][0-9]{0,4})d$/;

/**
 * `--to`: `+30d` (days after the business's test time), else what the API's `to` takes (a date,
 * meaning 00:00 UTC, or a date-time with a zone), checked by the API's own schema. The schema is
 * required when the command runs, so that `--help` loads none of the server.
 */
function targetOf(to: string): AdvanceTarget {
  const relative = RELATIVE.exec(to.trim());
  if (relative) return { days: Number(relative[1]) };
  if (to.trim().startsWith('+')) throw new UsageError(`--to must be a date (2027-01-31), a date-time (2027-01-31T09:00:00Z) or a number of days ahead (+30d), not "${to}"`);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- required when the command runs (see above)
  const { advanceTestClockBody } = require('../../server/test-clock/schema') as typeof import('../../server/test-clock/schema');
  return validBody(advanceTestClockBody, { to: to.trim() }, () => '--to');
}

function clockLine(businessId: number, clock: TestClockView): string {
  return `Business ${businessId}'s test clock: ${shortTime(clock.now)}${clock.frozen ? '' : ' (the real time: it has not been advanced)'}`;
}

export function clockCommand(): Command {
  const clock = groupCommand('clock');

  clock
    .command('show')
    .description("Show a business's test-mode time (live mode always runs on the real time)")
    .option('--business <id>', 'business id')
    .option('--json', 'machine-readable output: the test clock, as GET /test-clock shows it')
    .addHelpText('after', examples('invoicing clock show --business 1', 'invoicing clock show --business 1 --json'))
    .action(async (raw: ClockOptions) => {
      const opts = await ensureOptions(raw, [BUSINESS_QUESTION]);
      const businessId = positiveId(opts.business!, '--business');
      const shown = await withContext(({ services }) => services.testClocks.getForOwner(businessId));
      output(opts.json, { test_clock: shown }, () => [clockLine(businessId, shown)]);
    });

  clock
    .command('advance')
    .description("Move a business's test-mode time forward (never back), running what falls due on the way at each midnight (UTC), dated then")
    .option('--business <id>', 'business id')
    .option('--to <when>', 'a date (00:00 UTC of it), a date-time with a zone, or +Nd: N days after the test clock\'s time')
    .option('--json', 'machine-readable output: the test clock, as POST /test-clock/advance answers')
    .addHelpText(
      'after',
      `${examples('invoicing clock advance --business 1 --to 2027-01-31', 'invoicing clock advance --business 1 --to +30d', 'invoicing clock advance --business 1 --to 2027-01-31T09:00:00Z --json')}

Overdue invoices fire invoice.overdue as their due dates pass; each event is dated when it was due.
The running server delivers their webhooks, and \`invoicing webhooks listen\` shows them.`,
    )
    .action(async (raw: ClockOptions) => {
      const opts = await ensureOptions(raw, [BUSINESS_QUESTION, { key: 'to', flag: '--to', message: 'Advance to (a date, or +30d)' }]);
      const businessId = positiveId(opts.business!, '--business');
      const target = targetOf(opts.to!);
      const moved = await withContext(({ services }) => services.testClocks.advanceForOwner(businessId, target));
      output(opts.json, { test_clock: moved }, () => [clockLine(businessId, moved), 'What fell due on the way is recorded; the running server delivers its webhooks.']);
    });

  return clock;
}
