/**
 * Webhook delivery benchmark on MariaDB: events are committed, our server's worker delivers them to
 * a receiver in this process (node:http, answers 200 at once), and the receipts are timed.
 *   npm run build && node dist/bench/webhooks.js [--events 2000] [--concurrency 20]
 * 1. "nudged": N invoices created through POST /api/v1/partner/invoices (concurrency 20) against a
 *    running server, so each commit nudges its in-process worker. Prints deliveries/s from the first
 *    event's created_at to the last receipt, and commit-to-receipt latency (receipt − the event's
 *    created_at, both on this machine's clock; also receipt − the POST's response as the client saw it).
 * 2. "sweep": the server is stopped, N invoices are created directly through the services (the same
 *    transactions, outbox rows included), then the server is started: its start-up sweep drains the
 *    backlog. Prints deliveries/s from the first to the last receipt.
 * 3. "a stalling receiver": a second key of the business gets every event at a second receiver,
 *    (a) answering at once, then (b) holding every request it gets for 10 s from a quarter into the
 *    run. Prints the first receiver's commit-to-receipt latency in both: what the stall costs the others.
 * After each scenario the delivery rows are counted by status (in 1 and 2 every one should have
 * succeeded on its first attempt), and a summary closes the run.
 * BENCH_MYSQL_URL (default mysql://root@127.0.0.1:3306/invoicing_bench) is dropped and re-created.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import path from 'node:path';
import { Credential } from '../server/auth/credential';
import { loadConfig } from '../server/config';
import { Database } from '../server/db/database';
import { createServices, Services } from '../server/services';
import { numberOption, recreateMysqlDatabase, serverNodeArgs } from './support';

const EVENTS = numberOption('events', 2000);
const CONCURRENCY = numberOption('concurrency', 20);
const TIMEOUT_MS = 120_000;
/** How long the stalling receiver holds requests. */
const STALL_MS = 10_000;
const PORT = 4811;
const API = `http://127.0.0.1:${PORT}/api/v1/partner`;
const databaseUrl = process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/invoicing_bench';
// One sealing key for the seeding process and the server, so the server can open the webhook secret.
const appSecretKey = randomBytes(32).toString('base64');

/** One request the receiver got. */
interface Receipt {
  at: number;
  idempotencyKey: string;
  createdAt: number;
  invoiceId: number | undefined;
}

class Receiver {
  receipts: Receipt[] = [];
  malformed = 0;
  /** Until then (ms since the epoch), requests are held open and answered only when it comes. */
  stallUntil = 0;
  private server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const answer = () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      if (this.stallUntil > at) setTimeout(answer, this.stallUntil - at);
      else answer();
      try {
        const payload = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          idempotency_key: string;
          created_at: string;
          data?: { invoice?: { id?: number } };
        };
        this.receipts.push({
          at,
          idempotencyKey: payload.idempotency_key,
          createdAt: Date.parse(payload.created_at),
          invoiceId: payload.data?.invoice?.id,
        });
      } catch {
        this.malformed += 1;
      }
    });
  });

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as AddressInfo).port;
  }

  reset(): void {
    this.receipts = [];
    this.malformed = 0;
    this.stallUntil = 0;
  }

  distinctKeys(): number {
    return new Set(this.receipts.map((r) => r.idempotencyKey)).size;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

interface Seeded {
  db: Database;
  services: Services;
  key: string;
  cred: Credential;
  clientId: number;
}

async function seed(receiverPort: number): Promise<Seeded> {
  const db = Database.open(databaseUrl);
  await db.migrate();
  const services = createServices(db, loadConfig({ DATABASE_URL: databaseUrl, WEBHOOK_ALLOW_PRIVATE: 'true', APP_SECRET_KEY: appSecretKey }));
  const business = await services.businesses.create({ name: 'Bench Co', currency: 'USD' });
  const created = await services.keys.create({
    businessId: business.id,
    mode: 'test',
    scopes: ['clients:read', 'clients:write', 'invoices:read', 'invoices:write'],
    webhookUrl: `http://127.0.0.1:${receiverPort}/hook`,
  });
  const cred: Credential = {
    kind: 'api_key',
    id: created.id,
    businessId: business.id,
    livemode: false,
    scopes: created.scopes,
    subject: `key_${created.id}`,
  };
  const client = await services.clients.create(cred, { name: 'Webhook Client', email: 'webhook.client@example.com' });
  return { db, services, key: created.key, cred, clientId: client.id };
}

let serverErrors = 0;

/** Starts our server and resolves once it answers HTTP. Its log lines (warn and up) go to our stderr. */
async function startServer(): Promise<ChildProcess> {
  const command = [path.resolve(__dirname, '..', 'bin/invoicing.js'), 'serve', '--port', String(PORT)];
  const child = spawn(process.execPath, [...serverNodeArgs(), ...command], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      WEBHOOK_ALLOW_PRIVATE: 'true',
      RATE_LIMIT_PER_MINUTE: '1000000000',
      LOG_LEVEL: 'warn',
      APP_SECRET_KEY: appSecretKey,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child.stdout.setEncoding('utf8');
  let partial = '';
  child.stdout.on('data', (text: string) => {
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (/"level":(50|60)/.test(line)) serverErrors += 1;
      process.stderr.write(`[server] ${line}\n`);
    }
  });
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`server exited with ${code}`))));
  exited.catch(() => undefined);
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const answered = await Promise.race([fetch(`http://127.0.0.1:${PORT}/`).then(() => true, () => false), exited]);
    if (answered) return child;
    await sleep(50);
  }
  child.kill();
  throw new Error('the server did not start');
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `work(i)` for i in [0, n) with `CONCURRENCY` in flight. */
async function pool(n: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, n) }, async () => {
      while (next < n) await work(next++);
    }),
  );
}

function invoiceBody(clientId: number, i: number) {
  return {
    client_id: clientId,
    currency: 'USD',
    due_date: '2099-12-31',
    items: [{ description: `Webhook bench ${i}`, quantity: 1, unit_price: 10 }],
  };
}

/** Waits until the receiver has `expected` distinct idempotency keys, or the timeout. */
async function awaitReceipts(receiver: Receiver, expected: number): Promise<boolean> {
  for (const deadline = Date.now() + TIMEOUT_MS; Date.now() < deadline; await sleep(20)) {
    if (receiver.distinctKeys() >= expected) return true;
  }
  return false;
}

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** Delivery rows by status, and attempts that did not get a 2xx. */
async function deliveryState(db: Database): Promise<string> {
  const rows: { status: string; n: number; attempts: number; most: number }[] = await db
    .knex('webhook_deliveries')
    .select('status')
    .count({ n: '*' })
    .sum({ attempts: 'attempts' })
    .max({ most: 'attempts' })
    .groupBy('status');
  const [{ bad }]: { bad: number }[] = await db
    .knex('webhook_attempts')
    .whereNotNull('error')
    .orWhereNull('status_code')
    .orWhere('status_code', '>=', 300)
    .count({ bad: '*' });
  const [{ events }]: { events: number }[] = await db.knex('events').count({ events: '*' });
  const statuses = rows.map((r) => `${r.status} ${r.n} (attempts ${r.attempts}, most ${r.most})`).join(', ');
  return `events ${events}; deliveries: ${statuses || 'none'}; failed attempts ${bad}`;
}

function duplicatesOf(receiver: Receiver): number {
  return receiver.receipts.length - receiver.distinctKeys();
}

function firstByKey(receiver: Receiver): Receipt[] {
  const seen = new Map<string, Receipt>();
  for (const r of receiver.receipts) if (!seen.has(r.idempotencyKey)) seen.set(r.idempotencyKey, r);
  return [...seen.values()];
}

const ms = (n: number) => `${n.toFixed(0)} ms`;

/** What a nudged run measured, for the summary. */
interface NudgedFigures {
  ok: boolean;
  p50: number;
  p99: number;
  firstQuarterP50: number;
  lastQuarterP50: number;
}

/**
 * `receiver` is the one measured. With `other`, a second key of the business receives every event
 * too; with `stall`, that receiver holds every request it gets for 10 s, from a quarter into the run.
 */
async function nudged(seeded: Seeded, receiver: Receiver, title: string, other?: { receiver: Receiver; stall: boolean }): Promise<NudgedFigures> {
  receiver.reset();
  other?.receiver.reset();
  const server = await startServer();
  try {
    // Warm-up outside the measurement: one invoice and its delivery (JIT, pools, the key cache, got's import).
    const warm = await fetch(`${API}/invoices`, {
      method: 'POST',
      headers: { authorization: `Bearer ${seeded.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(invoiceBody(seeded.clientId, -1)),
    });
    if (warm.status !== 201) throw new Error(`POST /invoices: expected 201, got ${warm.status}: ${(await warm.text()).slice(0, 500)}`);
    if (!(await awaitReceipts(receiver, 1))) throw new Error('the warm-up event was not delivered');
    const warmKeys = receiver.distinctKeys();
    receiver.reset();
    other?.receiver.reset();

    const committedAt = new Map<number, number>();
    let errors = 0;
    const started = Date.now();
    await pool(EVENTS, async (i) => {
      if (other?.stall && i === Math.floor(EVENTS / 4)) other.receiver.stallUntil = Date.now() + STALL_MS;
      const res = await fetch(`${API}/invoices`, {
        method: 'POST',
        headers: { authorization: `Bearer ${seeded.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(invoiceBody(seeded.clientId, i)),
      });
      const answeredAt = Date.now();
      const body = (await res.json()) as { invoice?: { id: number } };
      if (res.status === 201 && body.invoice) committedAt.set(body.invoice.id, answeredAt);
      else errors += 1;
    });
    const postSeconds = (Date.now() - started) / 1000;
    const expected = committedAt.size;
    const complete = await awaitReceipts(receiver, expected);
    await sleep(500); // late duplicates, if any
    await stopServer(server);

    const firsts = firstByKey(receiver);
    const firstCommit = Math.min(...firsts.map((r) => r.createdAt));
    const lastReceipt = Math.max(...firsts.map((r) => r.at));
    const totalSeconds = (lastReceipt - firstCommit) / 1000;
    const server_ = firsts.map((r) => r.at - r.createdAt).sort((a, b) => a - b);
    const client = firsts
      .filter((r) => r.invoiceId !== undefined && committedAt.has(r.invoiceId))
      .map((r) => r.at - committedAt.get(r.invoiceId!)!)
      .sort((a, b) => a - b);
    const out = process.stdout;
    out.write(`\n${title}: ${EVENTS} POST /invoices, concurrency ${CONCURRENCY}, server running (warm-up: ${warmKeys} event delivered first)\n`);
    out.write(`  commits              ${expected} in ${postSeconds.toFixed(2)} s (${(expected / postSeconds).toFixed(0)} /s)${errors ? `, ${errors} POSTs failed` : ''}\n`);
    out.write(`  deliveries received  ${receiver.receipts.length} (${receiver.distinctKeys()} distinct), duplicates ${duplicatesOf(receiver)}${receiver.malformed ? `, malformed ${receiver.malformed}` : ''}${complete ? '' : `, TIMED OUT after ${TIMEOUT_MS / 1000} s`}\n`);
    if (other) out.write(`  the other receiver   ${other.receiver.distinctKeys()} distinct events${other.stall ? `, stalled ${STALL_MS / 1000} s from the ${Math.floor(EVENTS / 4)}th POST` : ''}\n`);
    out.write(`  first commit → last receipt  ${totalSeconds.toFixed(2)} s, ${(firsts.length / totalSeconds).toFixed(0)} deliveries/s\n`);
    const figures: NudgedFigures = { ok: complete && !duplicatesOf(receiver) && !errors, p50: percentile(server_, 50), p99: percentile(server_, 99), firstQuarterP50: NaN, lastQuarterP50: NaN };
    out.write(`  commit→receipt (receipt − event created_at)   p50 ${ms(figures.p50)}  p99 ${ms(figures.p99)}  max ${ms(server_[server_.length - 1])}\n`);
    // Whether the worker keeps pace: the latency of the first and the last quarter of the events, in commit order.
    const byCommit = [...firsts].sort((a, b) => a.createdAt - b.createdAt);
    const quarter = Math.max(1, Math.floor(byCommit.length / 4));
    const p50Of = (rs: Receipt[]) => percentile(rs.map((r) => r.at - r.createdAt).sort((a, b) => a - b), 50);
    figures.firstQuarterP50 = p50Of(byCommit.slice(0, quarter));
    figures.lastQuarterP50 = p50Of(byCommit.slice(-quarter));
    out.write(`  commit→receipt p50 of the first quarter ${ms(figures.firstQuarterP50)}, of the last quarter ${ms(figures.lastQuarterP50)}\n`);
    out.write(`  response→receipt (receipt − POST answered)    p50 ${ms(percentile(client, 50))}  p99 ${ms(percentile(client, 99))}  (negative: delivered before the client had its answer)\n`);
    out.write(`  rows: ${await deliveryState(seeded.db)}\n`);
    return figures;
  } finally {
    await stopServer(server);
  }
}

async function sweep(seeded: Seeded, receiver: Receiver): Promise<{ ok: boolean; perSecond: number }> {
  receiver.reset();
  // The server is stopped: these commits nudge nobody (the outbox here has no listener).
  const started = Date.now();
  await pool(EVENTS, async (i) => {
    await seeded.services.invoices.create(seeded.cred, invoiceBody(seeded.clientId, i));
  });
  const commitSeconds = (Date.now() - started) / 1000;
  const [{ pending }]: { pending: number }[] = await seeded.db.knex('webhook_deliveries').where('status', 'pending').count({ pending: '*' });
  const spawnedAt = Date.now();
  const server = await startServer();
  try {
    const listening = Date.now();
    const complete = await awaitReceipts(receiver, Number(pending));
    await sleep(500);
    await stopServer(server);
    const firsts = firstByKey(receiver);
    const first = Math.min(...firsts.map((r) => r.at));
    const last = Math.max(...firsts.map((r) => r.at));
    const out = process.stdout;
    out.write(`\nScenario 2, sweep: ${EVENTS} invoices committed directly (${commitSeconds.toFixed(2)} s) while the server was stopped, then the server started\n`);
    out.write(`  pending deliveries   ${pending}\n`);
    out.write(`  deliveries received  ${receiver.receipts.length} (${receiver.distinctKeys()} distinct), duplicates ${duplicatesOf(receiver)}${complete ? '' : `, TIMED OUT after ${TIMEOUT_MS / 1000} s`}\n`);
    out.write(`  first → last receipt ${((last - first) / 1000).toFixed(2)} s, ${(firsts.length / ((last - first) / 1000)).toFixed(0)} deliveries/s\n`);
    out.write(`  spawn → last receipt ${((last - spawnedAt) / 1000).toFixed(2)} s (server answered HTTP after ${((listening - spawnedAt) / 1000).toFixed(2)} s), ${(firsts.length / ((last - spawnedAt) / 1000)).toFixed(0)} deliveries/s\n`);
    out.write(`  rows: ${await deliveryState(seeded.db)}\n`);
    return { ok: complete && !duplicatesOf(receiver), perSecond: firsts.length / ((last - first) / 1000) };
  } finally {
    await stopServer(server);
  }
}

/** A second receiving key of the business, for the scenarios with two receivers. */
async function addReceiver(seeded: Seeded, port: number): Promise<void> {
  await seeded.services.keys.create({ businessId: seeded.cred.businessId, mode: 'test', scopes: ['invoices:read'], webhookUrl: `http://127.0.0.1:${port}/hook` });
}

async function main(): Promise<void> {
  const receiver = new Receiver();
  const other = new Receiver();
  const receiverPort = await receiver.listen();
  await recreateMysqlDatabase(databaseUrl);
  const seeded = await seed(receiverPort);
  let ok = false;
  try {
    process.stdout.write(`Webhook delivery on MariaDB: ${EVENTS} invoice.created events, receivers on 127.0.0.1 answering 200 at once\n`);
    const alone = await nudged(seeded, receiver, 'Scenario 1, nudged (one receiving key)');
    const backlog = await sweep(seeded, receiver);
    await addReceiver(seeded, await other.listen());
    const pair = await nudged(seeded, receiver, 'Scenario 3a, nudged, two receiving keys, both answering', { receiver: other, stall: false });
    const stalled = await nudged(seeded, receiver, `Scenario 3b, nudged, two receiving keys, the other stalling ${STALL_MS / 1000} s`, { receiver: other, stall: true });
    ok = alone.ok && backlog.ok && pair.ok && stalled.ok;
    const out = process.stdout;
    out.write('\nSummary\n');
    out.write(`  commit→receipt while ${CONCURRENCY} clients create invoices   p50 ${ms(alone.p50)}  p99 ${ms(alone.p99)}\n`);
    out.write(`  lag, p50 of the first quarter → the last quarter             ${ms(alone.firstQuarterP50)} → ${ms(alone.lastQuarterP50)}\n`);
    out.write(`  backlog drained                                              ${backlog.perSecond.toFixed(0)} deliveries/s\n`);
    out.write(`  p99 of the answering receiver, the other answering → stalling ${ms(pair.p99)} → ${ms(stalled.p99)} (${stalled.p99 - pair.p99 >= 0 ? '+' : ''}${ms(stalled.p99 - pair.p99)})\n`);
    if (serverErrors) out.write(`\nserver logged ${serverErrors} error line(s) (see stderr)\n`);
  } finally {
    await seeded.db.close();
    await receiver.close();
    await other.close();
  }
  if (!ok || serverErrors) process.exitCode = 1;
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
