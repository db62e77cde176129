/**
 * Load benchmark on MariaDB: authenticated GET /clients/{id} and GET /clients?per_page=100 over 10 000
 * seeded clients, against our server and the bare Express + mysql2 baseline in the same run.
 *   npm run build && node dist/bench/clients.js [--duration 5] [--rounds 3] [--connections 50]
 * Each case alternates the two servers for several rounds and reports the medians, so a noisy
 * neighbour on a shared machine skews both sides alike.
 * BENCH_MYSQL_URL (default mysql://root@127.0.0.1:3306/invoicing_bench) is dropped and re-created.
 */
import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import autocannon from 'autocannon';
import knexFactory from 'knex';
import { loadConfig } from '../server/config';
import { mysqlConnection } from '../server/db/connection';
import { Database } from '../server/db/database';
import { toDbTime } from '../server/db/time';
import { createServices } from '../server/services';

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const DURATION = option('duration', 5);
const ROUNDS = option('rounds', 3);
const CONNECTIONS = option('connections', 50);
const CLIENTS = 10_000;
const databaseUrl = process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/invoicing_bench';

async function recreateDatabase(): Promise<void> {
  const url = new URL(databaseUrl);
  const name = url.pathname.slice(1);
  const admin = knexFactory({ client: 'mysql2', connection: { ...mysqlConnection(databaseUrl), database: undefined } });
  await admin.raw(`DROP DATABASE IF EXISTS \`${name}\``);
  await admin.raw(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await admin.destroy();
}

async function seed(): Promise<{ key: string; sampleId: number }> {
  const db = Database.open(databaseUrl);
  await db.migrate();
  const services = createServices(db, loadConfig({ DATABASE_URL: databaseUrl }));
  const business = await services.businesses.create({ name: 'Bench Co', currency: 'USD' });
  const { key } = await services.keys.create({ businessId: business.id, mode: 'test', scopes: ['clients:read'] });
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
  const [{ id }] = await db.knex('clients').select('id').orderBy('id').offset(CLIENTS / 2).limit(1);
  await db.close();
  return { key, sampleId: id };
}

/** Starts a server process and resolves once it answers HTTP. Its output (logs) goes nowhere. */
async function start(command: string[], env: NodeJS.ProcessEnv, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, command, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`${command.join(' ')} exited with ${code}`))));
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const answered = await Promise.race([
      fetch(`http://127.0.0.1:${port}/`).then(() => true, () => false),
      exited,
    ]);
    if (answered) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error(`${command.join(' ')} did not start`);
}

interface Measured {
  rps: number;
  p99: number;
  errors: number;
}

async function load(url: string, key: string): Promise<Measured> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: DURATION, headers: { authorization: `Bearer ${key}` } });
  return { rps: result.requests.average, p99: result.latency.p99, errors: result.errors + result.non2xx };
}

/** Median throughput and median p99 of the rounds; errors summed. */
function median(runs: Measured[]): Measured {
  const mid = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  return { rps: mid(runs.map((r) => r.rps)), p99: mid(runs.map((r) => r.p99)), errors: runs.reduce((n, r) => n + r.errors, 0) };
}

async function main(): Promise<void> {
  await recreateDatabase();
  const { key, sampleId } = await seed();
  const dist = path.resolve(__dirname, '..');
  // Our server as it runs in production: request logs at info level (written to nowhere here).
  const ours = await start(
    [path.join(dist, 'bin/invoicing.js'), 'serve', '--port', '4801'],
    { DATABASE_URL: databaseUrl, RATE_LIMIT_PER_MINUTE: '1000000000', LOG_LEVEL: 'info' },
    4801,
  );
  const baseline = await start([path.join(__dirname, 'baseline.js'), databaseUrl, '4802'], {}, 4802);
  const cases = [
    { name: `GET /clients/${sampleId}`, ours: `http://127.0.0.1:4801/api/v1/partner/clients/${sampleId}`, base: `http://127.0.0.1:4802/clients/${sampleId}` },
    { name: 'GET /clients?per_page=100', ours: 'http://127.0.0.1:4801/api/v1/partner/clients?per_page=100', base: 'http://127.0.0.1:4802/clients?per_page=100' },
  ];
  try {
    process.stdout.write(`${CLIENTS} clients on MariaDB; ${CONNECTIONS} connections; medians of ${ROUNDS} alternating ${DURATION} s runs\n`);
    for (const c of cases) {
      await load(c.ours, key); // warm-up: JIT, pools and the key cache
      await load(c.base, key);
      const ourRuns: Measured[] = [];
      const baseRuns: Measured[] = [];
      for (let round = 0; round < ROUNDS; round += 1) {
        baseRuns.push(await load(c.base, key));
        ourRuns.push(await load(c.ours, key));
      }
      const ourRun = median(ourRuns);
      const base = median(baseRuns);
      process.stdout.write(
        `${c.name.padEnd(28)} ours ${ourRun.rps.toFixed(0).padStart(6)} req/s p99 ${String(ourRun.p99).padStart(4)} ms` +
          ` | baseline ${base.rps.toFixed(0).padStart(6)} req/s p99 ${String(base.p99).padStart(4)} ms` +
          ` | ratio ${(ourRun.rps / base.rps).toFixed(2)}x throughput` +
          `${ourRun.errors + base.errors ? ` | errors ours ${ourRun.errors} baseline ${base.errors}` : ''}\n`,
      );
    }
  } finally {
    ours.kill('SIGTERM');
    baseline.kill('SIGTERM');
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
