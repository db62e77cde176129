/**
 * The statements one recurring invoice's issue runs (RecurringInvoiceService.issue, auto_send: what a
 * test clock's advance does 145 times in bench/test-clock.ts), and a draft's POST /invoices
 * (InvoiceService.create), in test and live mode: those of the work's transaction, BEGIN and COMMIT
 * included, counted with knex's 'query' event (what the e-mail queue runs beside it is left out).
 *   npm run build && npm run bench:issue-statements -- [--verbose 1] [--payloads 1]
 * On SQLite (a scratch file), or on MariaDB with BENCH_DATABASE_URL=mysql://… (dropped and made again).
 * `--verbose 1` prints the statements; `--payloads 1` what the work wrote (events, e-mails, invoice
 * rows) with its random and clock-dependent values masked, to compare two versions of the code.
 */
import { systemActor } from '../server/auth/actor';
import { todayUtc } from '../server/clock';
import { benchWithServices, numberOption } from './support';

const VERBOSE = numberOption('verbose', 0) > 0;
const PAYLOADS = numberOption('payloads', 0) > 0;
const masked = (value: unknown) =>
  JSON.stringify(value)
    .replace(/\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?Z?/g, '<time>')
    .replace(/[A-Za-z0-9_-]{43}/g, '<token>')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
    .replace(/<[0-9a-f]{32}@/g, '<message-id>@');

benchWithServices('issue-statements', async ({ db, services }) => {
  let statements: { sql: string; transaction?: string }[] | null = null;
  db.knex.on('query', (query: { sql: string; __knexTxId?: string }) => statements?.push({ sql: query.sql, transaction: query.__knexTxId }));
  const counted = async (label: string, work: () => Promise<unknown>) => {
    await mark();
    statements = [];
    await work();
    const transaction = statements.find(({ sql }) => sql.startsWith('BEGIN'))?.transaction;
    const seen = statements.filter((statement) => statement.transaction === transaction).map(({ sql }) => sql);
    statements = null;
    console.log(`${label}: ${seen.length} statements`);
    if (VERBOSE) for (const sql of seen) console.log(`  ${sql.replace(/\s+/g, ' ').slice(0, 160)}`);
    if (PAYLOADS) {
      const since = <Row>(table: string): Promise<Row[]> => db.knex(table).where('id', '>', marks[table]).orderBy('id');
      const events = await since<{ type: string; data: string }>('events');
      for (const event of events) console.log(`  event ${event.type}: ${masked(JSON.parse(event.data))}`);
      for (const message of await since<object>('email_messages')) console.log(`  email: ${masked({ ...message, id: undefined })}`);
      for (const invoice of await since<object>('invoices')) console.log(`  invoice: ${masked(invoice)}`);
    }
  };
  const marks: Record<string, number> = {};
  const mark = async () => {
    for (const table of ['events', 'email_messages', 'invoices']) marks[table] = Number((await db.knex(table).max({ id: 'id' }))[0].id ?? 0);
  };
  const business = await services.businesses.create({ name: 'Bench Business', currency: 'USD', country: 'US' });
  await services.businesses.update(business.id, { reminder_offsets: [-3, 1, 7] });
  for (const livemode of [false, true]) {
    const tenancy = { businessId: business.id, livemode };
    const actor = systemActor('cli', tenancy);
    const today = todayUtc();
    const { client, schedule } = await services.clocks.actFor(tenancy, async () => {
      const client = await services.clients.create(actor, { name: 'Monthly Client', email: 'monthly@example.com' });
      const schedule = await services.recurringInvoices.create(actor, {
        client_id: client.id,
        currency: 'USD',
        items: [{ description: 'Retainer', quantity: 1, unit_price: 100 }],
        interval: 'week',
        start_date: today,
        days_until_due: 14,
      });
      return { client, schedule };
    });
    const mode = livemode ? 'live' : 'test';
    // The first issue warms what is read once per process; the second is the one counted as typical.
    await services.recurringInvoices.issue(tenancy, schedule.id, today);
    const next = (await services.recurringInvoices.get(actor, schedule.id)).next_issue_date!;
    await counted(`${mode}: recurring issue (auto_send)`, () => services.recurringInvoices.issue(tenancy, schedule.id, next));
    await counted(`${mode}: POST /invoices (draft)`, () =>
      services.clocks.actFor(tenancy, () => services.invoices.create(actor, { client_id: client.id, items: [{ description: 'One', quantity: 1, unit_price: 5 }] })),
    );
  }
});
