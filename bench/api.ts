/**
 * Load benchmark on MariaDB, against our server and the bare Express + mysql2 baseline in the same run:
 * authenticated GET /clients/{id} and GET /clients?per_page=100 over 10 000 seeded clients, then the
 * writes POST /invoices (a draft with 3 items, untaxed and with a 19 % rate on each line, the second
 * against the same untaxed baseline) and POST /quick-charge (an issued invoice for a client
 * found by a fixed e-mail, as a checkout would send it), each with a fresh Idempotency-Key.
 *   npm run build && node dist/bench/api.js [--duration 5] [--rounds 3] [--connections 50] [--only 'GET /clients/']
 * Each case alternates the two servers for several rounds and reports the medians, so a noisy
 * neighbour on a shared machine skews both sides alike. Before loading a case each server answers
 * one request that must have the expected status (a baseline invoice is also read back through our
 * API, so its rows are valid for our schema); under load every other status counts as an error.
 * BENCH_MYSQL_URL (default mysql://root@127.0.0.1:3306/invoicing_bench) is dropped and re-created.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import knexFactory, { Knex } from 'knex';
import { systemActor } from '../server/auth/actor';
import { loadConfig } from '../server/config';
import { mysqlConnection } from '../server/db/connection';
import { Database } from '../server/db/database';
import { toDbTime } from '../server/db/time';
import { createServices } from '../server/services';
import { numberOption, recreateMysqlDatabase, startProcess } from './support';

const DURATION = numberOption('duration', 5);
const ROUNDS = numberOption('rounds', 3);
const CONNECTIONS = numberOption('connections', 50);
/** `--only GET` runs the cases whose name contains the text (to profile one of them). */
const ONLY = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : '';
const CLIENTS = 10_000;
const databaseUrl = process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/invoicing_bench';
/** MySQL needs the application key that seals secrets; the seeding and the server share this run's. */
const appSecretKey = randomBytes(32).toString('base64');

async function seed(): Promise<{ key: string; sampleId: number; taxRateId: number }> {
  const db = Database.open(databaseUrl);
  await db.migrate();
  const services = createServices(db, loadConfig({ DATABASE_URL: databaseUrl, APP_SECRET_KEY: appSecretKey }));
  const business = await services.businesses.create({ name: 'Bench Co', currency: 'USD' });
  const { key } = await services.keys.create({ businessId: business.id, mode: 'test', scopes: ['clients:read', 'invoices:write'] });
  const taxRate = await services.taxRates.create(systemActor('cli', { businessId: business.id, livemode: false }), { display_name: 'VAT', percentage: 19 });
  const now = toDbTime(new Date());
  const rows = Array.from({ length: CLIENTS }, (_, i) => ({
    business_id: business.id,
    livemode: false,
    name: `Client ${i}`,
    email: `client${i}@example.com`,
    email_normalized: `client${i}@example.com`,
    search_text: `client ${i}\nclient${i}@example.com\n`,
    created_at: now,
    updated_at: now,
  }));
  await db.knex.batchInsert('clients', rows, 1000);
  const [{ id }] = await db.knex<{ id: number }>('clients').select('id').orderBy('id').offset(CLIENTS / 2).limit(1);
  await db.close();
  return { key, sampleId: id, taxRateId: taxRate.id };
}

interface Case {
  name: string;
  method: 'GET' | 'POST';
  /** Path under our /api/v1/partner and under the baseline's root. */
  path: string;
  body?: unknown;
  /** What the baseline gets instead of `body`: the fields it does not know (taxes) left out. */
  baselineBody?: unknown;
  status: number;
}

interface Measured {
  rps: number;
  /** CPU time the server process, and the database server, spent per answered request (ms): what the throughput ratio is made of on a shared machine. */
  serverCpuMs: number;
  databaseCpuMs: number;
  p99: number;
  /** Connection errors and timeouts plus every response whose status is not the case's. */
  errors: number;
  /** Unexpected statuses and how often: `500×12`, `errors×3` for connection errors. */
  unexpected: Map<string, number>;
}

const OURS = 'http://127.0.0.1:4801/api/v1/partner';
/** The two server processes, whose CPU time each load measures. */
let ourPid: number | undefined;
let basePid: number | undefined;
const BASE = 'http://127.0.0.1:4802';

function request(c: Case, key: string, origin: string) {
  const body = origin === BASE ? (c.baselineBody ?? c.body) : c.body;
  return {
    method: c.method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  };
}

/** A POST goes out as a careful integrator sends it: with a fresh Idempotency-Key each time, so both servers store one. */
function withIdempotencyKey<R extends { headers?: Record<string, string> }>(req: R): R {
  return { ...req, headers: { ...req.headers, 'idempotency-key': randomUUID() } };
}

/** CPU seconds a process has used so far (user + system), from /proc; 0 where there is none. */
function cpuSeconds(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    // The fields after the command name: utime and stime are the 12th and 13th, in clock ticks (100 a second).
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** The MariaDB server's process on this machine, if it runs here. */
function databasePid(): number | undefined {
  try {
    return Number(execFileSync('pidof', ['mariadbd', 'mysqld'], { encoding: 'utf8' }).trim().split(' ')[0]) || undefined;
  } catch {
    return undefined;
  }
}

async function load(origin: string, c: Case, key: string): Promise<Measured> {
  const server = origin === OURS ? ourPid : basePid;
  const database = databasePid();
  const [serverBefore, databaseBefore] = [cpuSeconds(server), cpuSeconds(database)];
  const result = await autocannon({
    url: `${origin}${c.path}`,
    connections: CONNECTIONS,
    duration: DURATION,
    ...request(c, key, origin),
    ...(c.method === 'POST' ? { requests: [{ setupRequest: (req: autocannon.Request) => withIdempotencyKey(req as { headers?: Record<string, string> }) }] } : {}),
  });
  const unexpected = new Map<string, number>();
  for (const [status, { count = 0 }] of Object.entries(result.statusCodeStats ?? {})) {
    if (Number(status) !== c.status && count) unexpected.set(status, count);
  }
  if (result.errors) unexpected.set('errors', result.errors);
  const errors = [...unexpected.values()].reduce((n, v) => n + v, 0);
  // Throughput counts only answers with the expected status: a fast 500 is not a served request.
  const ok = result.statusCodeStats?.[`${c.status}`]?.count ?? 0;
  await drained();
  const perRequest = (seconds: number) => (ok ? (seconds * 1000) / ok : 0);
  return {
    rps: ok / result.duration,
    p99: result.latency.p99,
    serverCpuMs: perRequest(cpuSeconds(server) - serverBefore),
    databaseCpuMs: perRequest(cpuSeconds(database) - databaseBefore),
    errors,
    unexpected,
  };
}

let monitor: Knex | undefined;

/**
 * Waits until no transaction or statement is running on the bench database. autocannon stops
 * sending after the duration, but the requests a server has queued run on, and they would
 * contend for the same rows as the next run against the other server.
 */
async function drained(): Promise<void> {
  monitor ??= knexFactory({ client: 'mysql2', connection: { ...mysqlConnection(databaseUrl), database: undefined }, pool: { min: 0, max: 1 } });
  const name = new URL(databaseUrl).pathname.slice(1);
  let quiet = 0;
  // MariaDB refreshes information_schema.innodb_trx only when it was last read over 100 ms ago.
  for (const deadline = Date.now() + 30_000; quiet < 2 && Date.now() < deadline; ) {
    const [[{ busy }]] = (await monitor.raw(
      `SELECT (SELECT COUNT(*) FROM information_schema.innodb_trx t JOIN information_schema.processlist p ON p.id = t.trx_mysql_thread_id
               WHERE p.db = ?) + (SELECT COUNT(*) FROM information_schema.processlist WHERE db = ? AND command <> 'Sleep' AND id <> CONNECTION_ID()) AS busy`,
      [name, name],
    )) as [{ busy: number }[]];
    quiet = Number(busy) ? 0 : quiet + 1;
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** Median throughput and median p99 of the rounds; errors summed. */
function median(runs: Measured[]): Measured {
  const mid = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const unexpected = new Map<string, number>();
  for (const run of runs) for (const [status, n] of run.unexpected) unexpected.set(status, (unexpected.get(status) ?? 0) + n);
  return {
    rps: mid(runs.map((r) => r.rps)),
    p99: mid(runs.map((r) => r.p99)),
    serverCpuMs: mid(runs.map((r) => r.serverCpuMs)),
    databaseCpuMs: mid(runs.map((r) => r.databaseCpuMs)),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    unexpected,
  };
}

const cpu = (ms: number) => ms.toFixed(3);

const showErrors = (m: Measured) => (m.errors ? `${m.errors} (${[...m.unexpected].map(([s, n]) => `${s}×${n}`).join(', ')})` : '0');

/**
 * One request to each server before the load: both must answer the case's status. A created invoice
 * must have its 3 items and the same total on both sides, and the baseline's invoice must read back
 * through our own GET /invoices/{id}, so the baseline writes rows our code accepts.
 */
async function check(c: Case, key: string): Promise<void> {
  const answers: Record<string, unknown>[] = [];
  for (const origin of [OURS, BASE]) {
    const res = await fetch(`${origin}${c.path}`, c.method === 'POST' ? withIdempotencyKey(request(c, key, origin)) : request(c, key, origin));
    const text = await res.text();
    if (res.status !== c.status) throw new Error(`${c.name} on ${origin}: expected ${c.status}, got ${res.status}: ${text.slice(0, 500)}`);
    answers.push(JSON.parse(text) as Record<string, unknown>);
  }
  if (c.method !== 'POST') return;
  type Shown = { id: number; status: string; number: string | null; total: number; items: unknown[] };
  const [ours, base] = answers.map((a) => a.invoice as Shown);
  const readBack = await fetch(`${OURS}/invoices/${base.id}`, request({ ...c, method: 'GET', body: undefined }, key, OURS));
  const stored = ((await readBack.json()) as { invoice?: Shown }).invoice;
  for (const [who, shown] of [['ours', ours], ['baseline', base], ['baseline read back by ours', stored]] as const) {
    // Where the baseline gets a body of its own (ours taxed, its untaxed), the totals differ by design.
    const totalDiffers = !c.baselineBody && shown?.total !== ours.total;
    if (!shown || totalDiffers || shown.status !== ours.status || shown.items.length !== ours.items.length || !!shown.number !== !!ours.number) {
      throw new Error(`${c.name}: ${who} shows ${JSON.stringify(shown)}; ours showed ${JSON.stringify(ours)}`);
    }
  }
}

async function main(): Promise<void> {
  await recreateMysqlDatabase(databaseUrl);
  const { key, sampleId, taxRateId } = await seed();
  const threeItems = [
    { description: 'Consulting', quantity: 3, unit_price: 120 },
    { description: 'Hosting (monthly)', quantity: 1, unit_price: 29.99 },
    { description: 'Domain renewal', quantity: 0.5, unit_price: 15.25 },
  ];
  const dist = path.resolve(__dirname, '..');
  // Our server as it runs in production: request logs at info level (written to nowhere here).
  const ours = await startProcess(
    [path.join(dist, 'bin/invoicing.js'), 'serve', '--port', '4801'],
    { DATABASE_URL: databaseUrl, APP_SECRET_KEY: appSecretKey, RATE_LIMIT_PER_MINUTE: '1000000000', LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info' },
    4801,
  );
  const baseline = await startProcess([path.join(__dirname, 'baseline.js'), databaseUrl, '4802'], {}, 4802);
  [ourPid, basePid] = [ours.pid, baseline.pid];
  const cases: Case[] = [
    { name: `GET /clients/${sampleId}`, method: 'GET', path: `/clients/${sampleId}`, status: 200 },
    { name: 'GET /clients?per_page=100', method: 'GET', path: '/clients?per_page=100', status: 200 },
    {
      name: 'POST /invoices (3 items)',
      method: 'POST',
      path: '/invoices',
      status: 201,
      body: { client_id: sampleId, currency: 'USD', due_date: '2099-12-31', items: threeItems },
    },
    {
      // Ours with a 19 % rate on each line, against the same untaxed baseline: what taxes cost.
      name: 'POST /invoices (3 taxed items)',
      method: 'POST',
      path: '/invoices',
      status: 201,
      body: { client_id: sampleId, currency: 'USD', due_date: '2099-12-31', items: threeItems.map((item) => ({ ...item, tax_rate_ids: [taxRateId] })) },
      baselineBody: { client_id: sampleId, currency: 'USD', due_date: '2099-12-31', items: threeItems },
    },
    {
      name: 'POST /quick-charge',
      method: 'POST',
      path: '/quick-charge',
      status: 201,
      body: { amount: 49.99, currency: 'USD', client: { name: 'Checkout Customer', email: 'Checkout.Customer@example.com' } },
    },
  ];
  try {
    process.stdout.write(`${CLIENTS} clients on MariaDB; ${CONNECTIONS} connections; medians of ${ROUNDS} alternating ${DURATION} s runs; req/s counts answers with the expected status\n`);
    for (const c of cases.filter(({ name }) => name.includes(ONLY))) {
      await check(c, key);
      await load(OURS, c, key); // warm-up: JIT, pools and the key cache
      await load(BASE, c, key);
      const ourRuns: Measured[] = [];
      const baseRuns: Measured[] = [];
      for (let round = 0; round < ROUNDS; round += 1) {
        baseRuns.push(await load(BASE, c, key));
        ourRuns.push(await load(OURS, c, key));
      }
      const ourRun = median(ourRuns);
      const base = median(baseRuns);
      process.stdout.write(
        `${c.name.padEnd(28)} ours ${ourRun.rps.toFixed(0).padStart(6)} req/s p99 ${String(ourRun.p99).padStart(4)} ms` +
          ` | baseline ${base.rps.toFixed(0).padStart(6)} req/s p99 ${String(base.p99).padStart(4)} ms` +
          ` | ratio ${(ourRun.rps / base.rps).toFixed(2)}x throughput` +
          ` | CPU ms/request: server ${cpu(ourRun.serverCpuMs)} vs ${cpu(base.serverCpuMs)}, MariaDB ${cpu(ourRun.databaseCpuMs)} vs ${cpu(base.databaseCpuMs)}` +
          `${ourRun.errors + base.errors ? ` | errors ours ${showErrors(ourRun)} baseline ${showErrors(base)}` : ''}\n`,
      );
    }
  } finally {
    ours.kill('SIGTERM');
    baseline.kill('SIGTERM');
    await monitor?.destroy();
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
