/**
 * A test clock's advance of one year (the target: under 2 s for a business with 12 monthly
 * recurring invoices), through the service `POST /test-clock/advance` calls, in this process.
 *   npm run build && npm run bench:test-clock [-- --rounds 3]
 * On the embedded SQLite database (a scratch file), or on MariaDB with BENCH_DATABASE_URL=mysql://…
 * (dropped and made again). Each round makes a new business whose test clock starts at 2030-01-01,
 * reminding on -3,1,7, with 12 monthly recurring invoices (auto_send, one client each, starting on
 * the 1st to the 12th of January, 14 days to pay), and advances it to 2031-01-01: 144 invoices
 * issued and sent, each reminded three times and going overdue, every event dated when it was due.
 * The advance stops at each date an invoice is issued (recurring issuance says when it is next due);
 * the reminders and overdue invoices due before each stop are worked in time order, many to a
 * transaction.
 * Printed: each round's time with its stops, statements and events, and the median.
 */
import { systemActor } from '../server/auth/actor';
import { startStopwatch } from '../server/clock';
import { TimeDrivenWork } from '../server/db/clocks';
import { Services } from '../server/services';
import { TestClockService } from '../server/test-clock/service';
import { benchWithServices, numberOption } from './support';

const ROUNDS = numberOption('rounds', 3);

/** A business whose test clock stands at 2030-01-01, reminding on -3,1,7, with 12 monthly recurring invoices starting in January 2030. */
async function aBusiness(services: Services) {
  const business = await services.businesses.create({ name: 'Bench Business', currency: 'USD', country: 'US' });
  const actor = systemActor('cli', { businessId: business.id, livemode: false });
  await services.testClocks.advanceForOwner(business.id, { to: new Date('2030-01-01T00:00:00.000Z') });
  await services.businesses.update(business.id, { reminder_offsets: [-3, 1, 7] });
  await services.clocks.actFor(actor, async () => {
    for (let schedule = 1; schedule <= 12; schedule++) {
      const client = await services.clients.create(actor, { name: `Monthly Client ${schedule}`, email: `monthly${schedule}@example.com` });
      await services.recurringInvoices.create(actor, {
        client_id: client.id,
        currency: 'USD',
        items: [{ description: 'Retainer', quantity: 1, unit_price: 100 }],
        interval: 'month',
        start_date: `2030-01-${String(schedule).padStart(2, '0')}`,
        days_until_due: 14,
      });
    }
  });
  return business.id;
}

/** Counts the stops an advance makes (the runs of its issuance). */
function counting(work: TimeDrivenWork): { work: TimeDrivenWork; stops: () => number } {
  let stops = 0;
  const counted: TimeDrivenWork = {
    runDue: (tenancy, at) => {
      stops++;
      return work.runDue(tenancy, at);
    },
    ...(work.nextDueAfter ? { nextDueAfter: work.nextDueAfter.bind(work) } : {}),
  };
  return { work: counted, stops: () => stops };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

benchWithServices('test-clock', async ({ db, services, databaseUrl }) => {
  let statements = 0;
  db.knex.on('query', () => statements++);
  const results: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const businessId = await aBusiness(services);
    const issuance = counting(services.recurringSweep);
    const clocks = new TestClockService(db, services.clocks, { issuance: [issuance.work], followUps: services.followUps });
    statements = 0;
    const watch = startStopwatch();
    await clocks.advanceForOwner(businessId, { to: new Date('2031-01-01T00:00:00.000Z') });
    const ms = watch.elapsedMs();
    const ran = statements;
    results.push(ms);
    const events: { type: string; n: number | string }[] = await db.knex('events').where('business_id', businessId).select('type').count({ n: '*' }).groupBy('type');
    const counts = events.map(({ type, n }) => `${String(n)} ${type}`).join(', ');
    console.log(`round ${round} ${ms.toFixed(0).padStart(6)} ms  ${issuance.stops()} stops  ${ran} statements  ${counts}`);
  }
  console.log(`median ${median(results).toFixed(0)} ms (target: a year under 2000 ms) on ${databaseUrl.split(':')[0]}`);
});
