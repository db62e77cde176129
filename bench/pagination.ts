/**
 * Deep pages of a large list, on MariaDB: a million invoices of one business, read 100 at a time
 * through `GET /invoices` on the first page, on a page near the end reached with the keyset cursor
 * (`after=<meta.next_after>`), and on the same page reached with `page=N` (an OFFSET scan). Each
 * response includes its counts (`meta.total`). Prints the median latency of each and the ratio
 * to the first page (issue goal: the keyset page ≤ 1.2× the first page).
 *   npm run build && node dist/bench/pagination.js [--invoices 1000000] [--samples 20]
 * BENCH_PAGES_MYSQL_URL (default mysql://root@127.0.0.1:3306/invoicing_bench_pages) is dropped and re-created.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { loadConfig } from '../server/config';
import { Database } from '../server/db/database';
import { toDbTime } from '../server/db/time';
import { createServices } from '../server/services';
import { numberOption, recreateMysqlDatabase, startProcess } from './support';

const INVOICES = numberOption('invoices', 1_000_000);
const SAMPLES = numberOption('samples', 20);
const PER_PAGE = 100;
const PORT = 4831;
const databaseUrl = process.env.BENCH_PAGES_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/invoicing_bench_pages';
const appSecretKey = randomBytes(32).toString('base64');

/** The business, its key, one client and INVOICES drafts (rows written in bulk, as the API would store them). */
async function seed(): Promise<string> {
  const db = Database.open(databaseUrl);
  await db.migrate();
  const services = createServices(db, loadConfig({ DATABASE_URL: databaseUrl, APP_SECRET_KEY: appSecretKey }));
  const business = await services.businesses.create({ name: 'Pages Co', currency: 'USD' });
  const { key } = await services.keys.create({ businessId: business.id, mode: 'test', scopes: ['invoices:read'] });
  const actor = { kind: 'system' as const, reason: 'cli' as const, businessId: business.id, livemode: false };
  const client = await services.clients.create(actor, { name: 'Bulk Buyer', email: 'bulk@example.com' });
  const now = toDbTime(new Date());
  const started = Date.now();
  for (let from = 0; from < INVOICES; from += 10_000) {
    const rows = Array.from({ length: Math.min(10_000, INVOICES - from) }, (_, i) => ({
      business_id: business.id,
      livemode: false,
      client_id: client.id,
      number: null,
      status: 'draft',
      currency: 'USD',
      issue_date: '2026-11-24',
      due_date: '2026-12-24',
      subtotal: 10_000,
      total: 10_000,
      amount_paid: 0,
      notes: null,
      payment_token: `bench${String(from + i).padStart(38, '0')}`,
      metadata: '{}',
      created_at: now,
      updated_at: now,
    }));
    await db.knex('invoices').insert(rows);
  }
  console.log(`seeded ${INVOICES} invoices in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  await db.close();
  return key;
}

async function medianMs(url: string, key: string): Promise<{ ms: number; total: number; ids: number }> {
  const headers = { authorization: `Bearer ${key}` };
  const times: number[] = [];
  let last: { data: unknown[]; meta: { total: number } } | undefined;
  for (let i = 0; i < SAMPLES + 3; i += 1) {
    const started = process.hrtime.bigint();
    const res = await fetch(url, { headers });
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`);
    last = (await res.json()) as typeof last;
    if (i >= 3) times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)], total: last!.meta.total, ids: last!.data.length };
}

async function main(): Promise<void> {
  await recreateMysqlDatabase(databaseUrl);
  const key = await seed();
  const server = await startProcess(
    [path.join(path.resolve(__dirname, '..'), 'bin/invoicing.js'), 'serve', '--port', String(PORT)],
    { DATABASE_URL: databaseUrl, APP_SECRET_KEY: appSecretKey, RATE_LIMIT_PER_MINUTE: '1000000000', LOG_LEVEL: 'info' },
    PORT,
  );
  try {
    const base = `http://127.0.0.1:${PORT}/api/v1/partner/invoices?per_page=${PER_PAGE}`;
    const deepPage = Math.floor(INVOICES / PER_PAGE) - 10;
    // The cursor a client paging with next_after holds at that page: the last id of the page before.
    const offsetPage = (await (await fetch(`${base}&page=${deepPage - 1}`, { headers: { authorization: `Bearer ${key}` } })).json()) as { meta: { next_after: number } };
    const cursor = offsetPage.meta.next_after;
    const first = await medianMs(base, key);
    const keyset = await medianMs(`${base}&after=${cursor}`, key);
    const offset = await medianMs(`${base}&page=${deepPage}`, key);
    console.log(`${INVOICES} invoices of one business on MariaDB; ${PER_PAGE} per page; medians of ${SAMPLES} sequential requests, counts included`);
    const line = (name: string, m: { ms: number; total: number }) =>
      console.log(`${name.padEnd(40)} ${m.ms.toFixed(1).padStart(8)} ms  (meta.total ${m.total})  ratio ${(m.ms / first.ms).toFixed(2)}x the first page`);
    line('first page', first);
    line(`page ${deepPage} by after=${cursor}`, keyset);
    line(`page ${deepPage} by page=${deepPage}`, offset);
  } finally {
    server.kill();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
