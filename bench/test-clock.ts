/**
 * A test clock's advance of one year (the target: under 2 s for a business with 12 monthly
 * recurring invoices), through the service `POST /test-clock/advance` calls, in this process.
 *   npm run build && npm run bench:test-clock [-- --rounds 3]
 * On the embedded SQLite database (a scratch file), or on MariaDB with BENCH_DATABASE_URL=mysql://…
 * (dropped and made again). Each round makes a new business whose test clock starts at 2030-01-01,
 * reminding on -3,1,7, with 12 monthly recurring invoices (auto_send, one client each, starting on
 * the 1st to the 12th of January, 14 days to pay), and advances it to 2031-01-01: 144 invoices
 * issued and sent, each reminded three times and going overdue, every event dated when it was due.
 *   skipping   the works as the server builds them (recurring, reminders, overdue): each says when it
 *              is next due, so the advance stops only at those moments;
 *   daily      the same works behind wrappers that cannot say (as works without `nextDueAfter`):
 *              the advance stops at all 365 midnights.
 * Printed: each round's times and the medians, with the steps and events of each.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { systemActor } from '../server/auth/actor';
import { startStopwatch } from '../server/clock';
import { loadConfig } from '../server/config';
import { TimeDrivenWork } from '../server/db/clocks';
import { Database } from '../server/db/database';
import { createServices, Services } from '../server/services';
import { TestClockService } from '../server/test-clock/service';
import { numberOption, recreateMysqlDatabase } from './support';

const ROUNDS = numberOption('rounds', 3);
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-test-clock-'));
const databaseUrl = process.env.BENCH_DATABASE_URL ?? `sqlite:${path.join(scratch, 'invoicing.sqlite3')}`;

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

/** Counts the steps an advance stops at. */
function counting(work: TimeDrivenWork, hideNextDue: boolean): { work: TimeDrivenWork; steps: () => number } {
  let steps = 0;
  const counted: TimeDrivenWork = {
    runDue: (tenancy, at) => {
      steps++;
      return work.runDue(tenancy, at);
    },
    ...(hideNextDue || !work.nextDueAfter ? {} : { nextDueAfter: work.nextDueAfter.bind(work) }),
  };
  return { work: counted, steps: () => steps };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main(): Promise<void> {
  if (databaseUrl.startsWith('mysql')) await recreateMysqlDatabase(databaseUrl);
  const config = loadConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', APP_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') });
  const db = Database.open(databaseUrl);
  await db.migrate();
  const services = createServices(db, config);
  const results: Record<'skipping' | 'daily', number[]> = { skipping: [], daily: [] };
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      for (const variant of ['skipping', 'daily'] as const) {
        const businessId = await aBusiness(services);
        const counted = [services.recurringSweep, services.reminders, services.overdue].map((work) => counting(work, variant === 'daily'));
        const steps = () => counted[0].steps();
        const clocks = new TestClockService(db, services.clocks, counted.map(({ work }) => work));
        const watch = startStopwatch();
        await clocks.advanceForOwner(businessId, { to: new Date('2031-01-01T00:00:00.000Z') });
        const ms = watch.elapsedMs();
        results[variant].push(ms);
        const events: { type: string; n: number | string }[] = await db.knex('events').where('business_id', businessId).select('type').count({ n: '*' }).groupBy('type');
        const counts = events.map(({ type, n }) => `${String(n)} ${type}`).join(', ');
        console.log(`round ${round} ${variant.padEnd(8)} ${ms.toFixed(0).padStart(6)} ms  ${steps()} steps  ${counts}`);
      }
    }
    console.log(`median skipping ${median(results.skipping).toFixed(0)} ms, daily ${median(results.daily).toFixed(0)} ms (target: a year under 2000 ms) on ${databaseUrl.split(':')[0]}`);
  } finally {
    await db.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
