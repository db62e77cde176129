/**
 * Three `invoicing serve` processes on one MariaDB and one Redis, requests spread over them as a
 * round-robin load balancer would:
 *   npm run build && node dist/bench/processes.js [--duration 5] [--connections 48] [--invoices 600]
 * 1. GET /clients/{id}: one process alone, then the three together (the same total connections).
 * 2. POST /invoices with a fresh Idempotency-Key each, spread over the three: every event is delivered.
 * 3. The same while one process is killed with SIGKILL a third of the way through: every
 *    acknowledged invoice exists, and every committed event reaches the receiver once the dead
 *    process's leases (WEBHOOK_LEASE_SECONDS, 15 here) run out.
 * The test test/platform/processes.test.ts checks the shared rate limit and Idempotency-Key too.
 * BENCH_MYSQL_URL (default mysql://root@127.0.0.1:3306/invoicing_bench) is dropped and re-created;
 * BENCH_REDIS_URL defaults to redis://127.0.0.1:6379.
 */
import { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import path from 'node:path';
import autocannon from 'autocannon';
import { loadConfig } from '../server/config';
import { Database } from '../server/db/database';
import { createServices } from '../server/services';
import { numberOption, recreateMysqlDatabase, startProcess } from './support';

const DURATION = numberOption('duration', 5);
const CONNECTIONS = numberOption('connections', 48);
const INVOICES = numberOption('invoices', 600);
const LEASE_SECONDS = 15;
const PORTS = [4831, 4832, 4833];
const databaseUrl = process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/invoicing_bench';
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const appSecretKey = randomBytes(32).toString('base64');
const api = (port: number) => `http://127.0.0.1:${port}/api/v1/partner`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Counts the distinct events it is sent (by idempotency_key); answers 200 at once. */
class Receiver {
  readonly keys = new Set<string>();
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.end('ok');
      this.keys.add((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { idempotency_key: string }).idempotency_key);
    });
  });

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

async function seed(webhookUrl: string): Promise<{ db: Database; key: string; clientId: number; businessId: number }> {
  const db = Database.open(databaseUrl);
  await db.migrate();
  const services = createServices(db, loadConfig({ DATABASE_URL: databaseUrl, APP_SECRET_KEY: appSecretKey, WEBHOOK_ALLOW_PRIVATE: 'true' }));
  const business = await services.businesses.create({ name: 'Bench Co', currency: 'USD' });
  const created = await services.keys.create({ businessId: business.id, mode: 'test', scopes: ['clients:read', 'clients:write', 'invoices:read', 'invoices:write'], webhookUrl });
  const cred = { kind: 'api_key' as const, id: created.id, businessId: business.id, livemode: false, scopes: created.scopes, subject: `key_${created.id}` };
  const client = await services.clients.create(cred, { name: 'Spread Client', email: 'spread@example.com' });
  return { db, key: created.key, clientId: client.id, businessId: business.id };
}

function serve(port: number): Promise<ChildProcess> {
  return startProcess(
    [path.resolve(__dirname, '..', 'bin/invoicing.js'), 'serve', '--port', String(port)],
    {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      REDIS_PREFIX: `bench-${randomUUID()}:`,
      APP_SECRET_KEY: appSecretKey,
      RATE_LIMIT_PER_MINUTE: '1000000000',
      LOG_LEVEL: 'info',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_SWEEP_SECONDS: '1',
      WEBHOOK_LEASE_SECONDS: String(LEASE_SECONDS),
    },
    port,
  );
}

/** Requests/s of GET `path` over `ports`, the connections split between them, run side by side. */
async function readLoad(ports: number[], pathname: string, key: string): Promise<number> {
  const results = await Promise.all(
    ports.map((port) =>
      autocannon({ url: `${api(port)}${pathname}`, connections: Math.round(CONNECTIONS / ports.length), duration: DURATION, headers: { authorization: `Bearer ${key}` } }),
    ),
  );
  return results.reduce((sum, r) => sum + (r.statusCodeStats?.['200']?.count ?? 0) / r.duration, 0);
}

/** POSTs INVOICES invoices round-robin over `ports` from 20 clients; `onSent(i)` runs before the i-th. */
async function createInvoices(ports: number[], key: string, clientId: number, onSent: (i: number) => void = () => undefined) {
  const acknowledged: number[] = [];
  let refused = 0;
  let next = 0;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: 20 }, async () => {
      while (next < INVOICES) {
        const i = next++;
        onSent(i);
        const res = await fetch(`${api(ports[i % ports.length])}/invoices`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
          body: JSON.stringify({ client_id: clientId, currency: 'USD', items: [{ description: `Spread ${i}`, quantity: 1, unit_price: 10 }] }),
        }).catch(() => null);
        if (res?.status === 201) acknowledged.push(((await res.json()) as { invoice: { id: number } }).invoice.id);
        else refused += 1;
      }
    }),
  );
  return { acknowledged, refused, seconds: (Date.now() - started) / 1000 };
}

/** Waits until the receiver has every committed event of the business; the seconds it took, or null. */
async function allDelivered(db: Database, businessId: number, receiver: Receiver, withinMs: number): Promise<{ committed: number; seconds: number | null }> {
  const keys = (await db.knex('events').where('business_id', businessId).pluck('idempotency_key')) as string[];
  const started = Date.now();
  while (Date.now() - started < withinMs) {
    if (keys.every((k) => receiver.keys.has(k))) return { committed: keys.length, seconds: (Date.now() - started) / 1000 };
    await sleep(100);
  }
  return { committed: keys.length, seconds: null };
}

async function main(): Promise<void> {
  const receiver = new Receiver();
  await recreateMysqlDatabase(databaseUrl);
  const { db, key, clientId, businessId } = await seed(await receiver.listen());
  const children: ChildProcess[] = [];
  const rows: [string, string][] = [];
  let ok = true;
  try {
    children.push(...(await Promise.all(PORTS.map(serve))));
    await readLoad(PORTS, `/clients/${clientId}`, key); // warm-up
    const one = await readLoad([PORTS[0]], `/clients/${clientId}`, key);
    const three = await readLoad(PORTS, `/clients/${clientId}`, key);
    rows.push([`GET /clients/{id}, ${CONNECTIONS} connections`, `1 process ${one.toFixed(0)} req/s, 3 processes ${three.toFixed(0)} req/s (${(three / one).toFixed(2)}×)`]);

    const spread = await createInvoices(PORTS, key, clientId);
    const delivered = await allDelivered(db, businessId, receiver, 60_000);
    ok &&= spread.refused === 0 && delivered.seconds !== null;
    rows.push([
      `POST /invoices ×${INVOICES} over 3 processes`,
      `${(spread.acknowledged.length / spread.seconds).toFixed(0)} /s, ${spread.refused} refused; events delivered ${delivered.seconds === null ? 'NOT ALL' : `all ${delivered.committed}`}`,
    ]);

    const victim = children[1];
    const killed = await createInvoices(PORTS, key, clientId, (i) => i === Math.floor(INVOICES / 3) && victim.kill('SIGKILL'));
    const found = (await db.knex('invoices').whereIn('id', killed.acknowledged).pluck('id')) as number[];
    const recovered = await allDelivered(db, businessId, receiver, (LEASE_SECONDS + 30) * 1000);
    ok &&= found.length === killed.acknowledged.length && recovered.seconds !== null;
    rows.push([
      `… with process 2 killed (SIGKILL) at POST ${Math.floor(INVOICES / 3)}`,
      `acknowledged ${killed.acknowledged.length}, found ${found.length}; refused (connection to the dead process) ${killed.refused}; ` +
        `committed events ${recovered.committed}, ${recovered.seconds === null ? 'NOT ALL delivered' : `all delivered ${recovered.seconds.toFixed(1)} s after the load (lease ${LEASE_SECONDS} s)`}`,
    ]);
    process.stdout.write(`Three invoicing serve processes on one MariaDB and one Redis (${redisUrl})\n`);
    for (const [what, figure] of rows) process.stdout.write(`  ${what.padEnd(52)} ${figure}\n`);
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await db.close();
    await receiver.close();
  }
  if (!ok) process.exitCode = 1;
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
