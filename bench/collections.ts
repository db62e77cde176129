/**
 * Collections on MariaDB: one sweep (overdue, then payment reminders) over 100 000 invoices of
 * 1 000 businesses reminding on -3,1,7, 1 % of them due for a reminder (and overdue since
 * yesterday), while 8 connections create invoices through `POST /invoices` on a server process.
 *   npm run build && node dist/bench/collections.js [--businesses 1000] [--per-business 100] [--connections 8, 0 for the sweep alone] [--baseline 10]
 * Prints the sweep's time (issue goal: under 10 s) and the p99 of `POST /invoices` without the sweep
 * and during it, in the same run (goal: within 50 ms). The sweep runs in a process of its own, as
 * another server's would; the invoices are live, so each reminder queues its e-mail (written to a
 * temporary MAIL_OUTBOX_DIR, as without SMTP_URL).
 * The seeded invoices: 1 % sent and due yesterday, their -3 reminder already sent (one reminder and
 * one invoice.overdue due each); 9 % overdue for weeks, every reminder sent and invoice.overdue
 * fired; 30 % sent and due in 5 to 60 days; 60 % paid.
 * BENCH_COLLECTIONS_MYSQL_URL (default mysql://root@127.0.0.1:3306/invoicing_bench_collections) is dropped and re-created.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../server/config';
import { Database } from '../server/db/database';
import { toDbTime } from '../server/db/time';
import { createServices } from '../server/services';
import { numberOption, recreateMysqlDatabase, serverNodeArgs, startProcess } from './support';

const BUSINESSES = numberOption('businesses', 1000);
const PER_BUSINESS = numberOption('per-business', 100);
const CONNECTIONS = numberOption('connections', 8);
const BASELINE_SECONDS = numberOption('baseline', 10);
const PORT = 4841;
const databaseUrl = process.env.BENCH_COLLECTIONS_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/invoicing_bench_collections';
const sweeping = process.argv.includes('--sweep');
// The sweep process takes the run's key and outbox directory from the environment it is given.
const appSecretKey = sweeping ? process.env.APP_SECRET_KEY! : randomBytes(32).toString('base64');
const outboxDir = sweeping ? process.env.MAIL_OUTBOX_DIR! : fs.mkdtempSync(path.join(os.tmpdir(), 'bench-collections-mail-'));
const env = {
  DATABASE_URL: databaseUrl,
  APP_SECRET_KEY: appSecretKey,
  MAIL_OUTBOX_DIR: outboxDir,
  RATE_LIMIT_PER_MINUTE: '1000000000',
  LOG_LEVEL: 'info',
  // The server's own sweeps hourly, so the one timed here is the only one under way.
  OVERDUE_SWEEP_SECONDS: '3600',
  REMINDER_SWEEP_SECONDS: '3600',
};

function day(offset: number): string {
  const d = new Date();
  d.setUTCDate(d.getUTCDate() + offset);
  return d.toISOString().slice(0, 10);
}

/** 1 000 businesses with their client and invoices, written in bulk as the API would store them; the key and client of the business the load creates invoices for. */
async function seed(): Promise<{ key: string; clientId: number; due: number }> {
  const db = Database.open(databaseUrl);
  await db.migrate();
  const services = createServices(db, loadConfig({ DATABASE_URL: databaseUrl, APP_SECRET_KEY: appSecretKey }));
  const started = Date.now();
  const now = toDbTime(new Date());
  const longAgo = '2026-01-01 00:00:00.000';
  let due = 0;
  let token = 0;
  const clients: number[] = [];
  const businesses: number[] = [];
  for (let b = 0; b < BUSINESSES; b += 1) {
    const business = await services.businesses.create({ name: `Collections ${b}`, currency: 'USD' });
    const actor = { kind: 'system' as const, reason: 'cli' as const, businessId: business.id, livemode: true };
    businesses.push(business.id);
    clients.push((await services.clients.create(actor, { name: `Client ${b}`, email: `client${b}@example.com` })).id);
  }
  // Offsets set long ago, so the seeded invoices' reminder days all count.
  await db.knex('businesses').whereIn('id', businesses).update({ reminder_offsets: '-3,1,7', reminders_set_at_live: longAgo, reminders_set_at_test: longAgo });
  const rows: Record<string, unknown>[] = [];
  const kinds: ('due' | 'reminded' | 'future' | 'paid')[] = [];
  for (let b = 0; b < BUSINESSES; b += 1) {
    for (let i = 0; i < PER_BUSINESS; i += 1) {
      const slot = (b * PER_BUSINESS + i) % 100;
      const kind = slot === 0 ? 'due' : slot < 10 ? 'reminded' : slot < 40 ? 'future' : 'paid';
      const dueDate = kind === 'due' ? day(-1) : kind === 'reminded' ? day(-8 - (i % 20)) : kind === 'future' ? day(5 + (i % 55)) : day(-(i % 300));
      kinds.push(kind);
      if (kind === 'due') due += 1;
      token += 1;
      rows.push({
        business_id: businesses[b],
        livemode: true,
        client_id: clients[b],
        number: `INV-${String(i + 1).padStart(6, '0')}`,
        status: kind === 'paid' ? 'paid' : 'sent',
        currency: 'USD',
        issue_date: day(-90),
        due_date: dueDate,
        subtotal: 15_000,
        total_excluding_tax: 15_000,
        total: 15_000,
        amount_paid: kind === 'paid' ? 15_000 : 0,
        notes: null,
        payment_token: `coll${String(token).padStart(40, '0')}`,
        metadata: '{}',
        seller: JSON.stringify({ legal_name: `Collections ${b}` }),
        buyer: JSON.stringify({ name: `Client ${b}`, email: `client${b}@example.com` }),
        sent_at: now,
        paid_at: kind === 'paid' ? now : null,
        overdue_notified_at: kind === 'reminded' || kind === 'paid' ? now : null,
        created_at: now,
        updated_at: now,
      });
    }
  }
  let firstId = 0;
  for (let from = 0; from < rows.length; from += 5000) {
    const [id] = await db.knex('invoices').insert(rows.slice(from, from + 5000));
    if (from === 0) firstId = id;
  }
  // Consecutive ids (one insert per batch, InnoDB's default auto-increment lock mode): the reminders already sent.
  const reminders: Record<string, unknown>[] = [];
  kinds.forEach((kind, i) => {
    const invoice = rows[i];
    const sent = (offset: number) => reminders.push({ invoice_id: firstId + i, business_id: invoice.business_id, livemode: true, offset_days: offset, sent_at: longAgo });
    if (kind === 'due') sent(-3);
    if (kind === 'reminded') [-3, 1, 7].forEach(sent);
  });
  for (let from = 0; from < reminders.length; from += 5000) await db.knex('invoice_reminders').insert(reminders.slice(from, from + 5000));
  const loadBusiness = await services.businesses.create({ name: 'Load Co', currency: 'USD' });
  const { key } = await services.keys.create({ businessId: loadBusiness.id, mode: 'live', scopes: ['invoices:read', 'invoices:write'] });
  const loadActor = { kind: 'system' as const, reason: 'cli' as const, businessId: loadBusiness.id, livemode: true };
  const client = await services.clients.create(loadActor, { name: 'Load Client', email: 'load@example.com' });
  await db.knex.raw('analyze table invoices, invoice_reminders, businesses');
  console.log(`seeded ${rows.length} invoices of ${BUSINESSES} businesses (${due} due for a reminder) and ${reminders.length} reminders sent before, in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  await db.close();
  return { key, clientId: client.id, due };
}

/** The sweep process: overdue, then reminders, timed; prints one JSON line. */
async function sweepOnce(): Promise<void> {
  const db = Database.open(databaseUrl);
  const services = createServices(db, loadConfig(env));
  const started = process.hrtime.bigint();
  const overdue = await services.overdue.sweep();
  const overdueMs = Number(process.hrtime.bigint() - started) / 1e6;
  const reminders = await services.reminders.sweep();
  const totalMs = Number(process.hrtime.bigint() - started) / 1e6;
  console.log(JSON.stringify({ overdue, overdueMs, reminders, remindersMs: totalMs - overdueMs, totalMs }));
  await services.emails.stop();
  await db.close();
}

/** The sweep in a process of its own; resolves with what it printed. */
interface SweepTimes {
  overdue: number;
  overdueMs: number;
  reminders: number;
  remindersMs: number;
  totalMs: number;
}

function sweepProcess(): Promise<SweepTimes> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...serverNodeArgs(), __filename, '--sweep'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', (code) => {
      const times = out.split('\n').find((line) => line.startsWith('{"overdue"'));
      if (code === 0 && times) resolve(JSON.parse(times) as SweepTimes);
      else reject(new Error(`the sweep exited with ${code}: ${out}`));
    });
  });
}

/** CONNECTIONS loops creating invoices until `until` settles; the latency of each request, in ms. */
async function load(key: string, clientId: number, until: Promise<unknown>): Promise<number[]> {
  const latencies: number[] = [];
  let stop = false;
  void until.finally(() => (stop = true));
  const body = JSON.stringify({ client_id: clientId, currency: 'USD', due_date: day(30), items: [{ description: 'Load', quantity: 1, unit_price: 150 }] });
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (!stop) {
        const started = process.hrtime.bigint();
        const res = await fetch(`http://127.0.0.1:${PORT}/api/v1/partner/invoices`, { method: 'POST', headers, body });
        await res.arrayBuffer();
        if (res.status !== 201) throw new Error(`POST /invoices: ${res.status}`);
        latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
      }
    }),
  );
  return latencies;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function main(): Promise<void> {
  await recreateMysqlDatabase(databaseUrl);
  const { key, clientId, due } = await seed();
  const server = await startProcess([path.resolve(__dirname, '..', 'bin/invoicing.js'), 'serve', '--port', String(PORT)], env, PORT);
  try {
    // Warm-up, then the baseline and the sweep under the same load, in the same run (--connections 0: the sweep alone).
    await load(key, clientId, new Promise((r) => setTimeout(r, 2000)));
    const baseline = await load(key, clientId, new Promise((r) => setTimeout(r, BASELINE_SECONDS * 1000)));
    const sweep = sweepProcess();
    const during = await load(key, clientId, sweep);
    const swept = await sweep;
    console.log(`${BUSINESSES * PER_BUSINESS} invoices of ${BUSINESSES} businesses on MariaDB; POST /invoices from ${CONNECTIONS} connections`);
    console.log(
      `sweep: ${(swept.totalMs / 1000).toFixed(2)} s (goal < 10 s): invoice.overdue ${swept.overdue} in ${(swept.overdueMs / 1000).toFixed(2)} s, reminders ${swept.reminders} of ${due} due in ${(swept.remindersMs / 1000).toFixed(2)} s`,
    );
    if (!CONNECTIONS) return;
    const line = (name: string, latencies: number[]) =>
      console.log(`${name.padEnd(28)} ${String(latencies.length).padStart(6)} requests  p50 ${percentile(latencies, 50).toFixed(1).padStart(6)} ms  p99 ${percentile(latencies, 99).toFixed(1).padStart(6)} ms`);
    line('POST /invoices, no sweep', baseline);
    line('POST /invoices, during it', during);
    console.log(`p99 difference: ${(percentile(during, 99) - percentile(baseline, 99)).toFixed(1)} ms (goal within 50 ms)`);
  } finally {
    server.kill();
    fs.rmSync(outboxDir, { recursive: true, force: true });
  }
}

if (sweeping) {
  sweepOnce().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
} else {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
