/** `invoicing trigger <event-type>`: makes one event happen for real in test mode (fixtures in cli/triggers.ts). */
import { Command } from 'commander';
import { systemActor } from '../../server/auth/actor';
import { EVENT_TYPES, EventType } from '../../server/events/model';
import { cliConfig, testBusiness, withContext } from '../context';
import { UsageError } from '../errors';
import { positiveId } from '../options';
import { examples, output, table } from '../output';
import { TRIGGERS } from '../triggers';
import { apiUrlOf, requireServer } from '../running-server';
import { groupCommand } from './groups';

interface TriggerOptions {
  business?: string;
  apiUrl?: string;
  list?: boolean;
  json?: boolean;
}

export function triggerCommand(): Command {
  return groupCommand('trigger')
    .argument('[event-type]', `the event to make happen (${EVENT_TYPES.join(', ')})`)
    .option('--business <id>', 'the business (default: the only one; made when there is none)')
    .option('--api-url <url>', "the running server's partner API, which delivers the event (default: BASE_URL's, or http://localhost:$PORT's)")
    .option('--list', 'list the event types and what each trigger does')
    .option('--json', 'machine-readable output: { event, business_id, made }')
    .addHelpText('after', examples('invoicing trigger --list', 'invoicing trigger invoice.paid', 'invoicing trigger contract.signed --business 2 --json'))
    .action(async (type: string | undefined, opts: TriggerOptions) => {
      if (opts.list) {
        const rows = EVENT_TYPES.map((event) => [event, TRIGGERS[event].does]);
        return output(opts.json, EVENT_TYPES.map((event) => ({ event, does: TRIGGERS[event].does })), () => table(['EVENT', 'WHAT THE TRIGGER DOES'], rows));
      }
      if (type === undefined) throw new UsageError(`give an event type (${EVENT_TYPES.join(', ')}), or --list`);
      if (!(EVENT_TYPES as readonly string[]).includes(type)) throw new UsageError(`unknown event type "${type}": use one of ${EVENT_TYPES.join(', ')} (see --list)`);
      const event = type as EventType;
      const businessFlag = opts.business === undefined ? undefined : positiveId(opts.business, '--business');
      await requireServer(apiUrlOf(cliConfig(), opts.apiUrl), 'nothing was triggered');
      await withContext(async ({ services }) => {
        const business = await testBusiness(services, businessFlag);
        const actor = systemActor('cli', { businessId: business.id, livemode: false });
        // What the trigger makes is dated by the business's test-mode clock, as the API's requests are.
        const made = await services.clocks.actFor(actor, () => TRIGGERS[event].fire(services, actor));
        output(opts.json, { event, business_id: business.id, made }, () => [
          `Triggered ${event} in test mode for business ${business.id}${business.created ? ' (just made)' : ''}: made ${made.join(', ')}`,
          'The running server delivers it to the webhook URLs of the test keys, and `invoicing webhooks listen` forwards it.',
        ]);
      });
    });
}
