/**
 * GET /clients/{id} over HTTP while other connections fetch e-invoices, against its own figure in the
 * same run (the issue's target: it keeps at least 0.9× its own throughput while 8 connections fetch
 * Factur-X documents). Every e-invoice is written on the document threads (einvoice/worker.ts), which
 * run at a lower priority than the request thread: the request thread reads the invoice, checks it and answers.
 *   npm run build && npm run bench:einvoice-http [-- --duration 10 --rounds 3 --connections 10 --einvoice-connections 8 --pdf-threads N]
 * One `invoicing serve` process on the embedded SQLite database (a scratch file; BENCH_DATABASE_URL=mysql://…
 * runs it on MariaDB, dropped and made again), request logs at info level as in production (written to
 * nowhere), the rate limit raised. Seeded: the German seller ready for EN 16931 (legal identity,
 * registration, bank account, Peppol ID), three tax rates (19 %, 7 %, 0 % zero-rated), a French buyer
 * (the client fetched) and a 60-line invoice of that client on the three rates, issued through
 * POST /invoices/{id}/initiate-payment.
 * Each round runs three phases of `duration` seconds, in turn, so a noisy neighbour on a shared
 * machine weighs on all of them alike:
 *   alone    GET /clients/{id} with `connections` connections (autocannon);
 *   facturx  the same, while `einvoice-connections` other connections fetch
 *            GET /invoices/{id}/einvoice?format=facturx without pause (started 2 s before, so the PDF
 *            threads are up and their queue full); the documents answered inside the window are counted;
 *   ubl      the same with format=ubl (its XML written on the document threads too).
 * Between phases the server is let go quiet (queued PDFs finish). Printed: each round's figures, the
 * CPU the server's main thread, its other threads (the PDF threads, and V8's and libuv's helpers), this
 * process (the load) and the whole machine spent per second, then the medians and the ratios
 * clients-under-load / clients-alone against the 0.9 target. Last, each format's e-invoices alone
 * for `duration` seconds: all the server's CPU is then theirs, so it gives what one document costs
 * the request thread and the other threads. The load runs on the same machine as the server: on a
 * 2-CPU machine the server's main thread, its PDF thread and the load share them.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { ALL_SCOPES } from '../server/auth/scopes';
import { businessChangesSchema } from '../server/businesses/schema';
import { loadConfig } from '../server/config';
import { Database } from '../server/db/database';
import { createServices } from '../server/services';
import { validateInput } from '../server/validation';
import { freePort } from '../test/support/net';
import { numberOption, recreateMysqlDatabase, startProcess } from './support';

const DURATION = numberOption('duration', 10);
const ROUNDS = numberOption('rounds', 3);
const CONNECTIONS = numberOption('connections', 10);
const EINVOICE_CONNECTIONS = numberOption('einvoice-connections', 8);
/** PDF_THREADS of the server; unset, the server's default (half the CPUs, at least one). */
const PDF_THREADS = numberOption('pdf-threads', 0);
const TARGET = 0.9;
/** How long the e-invoice load runs before the clients' window opens. */
const LEAD_MS = 2000;

const dist = path.resolve(__dirname, '..');
const BIN = path.join(dist, 'bin/invoicing.js');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-einvoice-http-'));
const databaseUrl = process.env.BENCH_DATABASE_URL ?? `sqlite:${path.join(scratch, 'invoicing.sqlite3')}`;
const appSecretKey = randomBytes(32).toString('base64');

/** The seller of the e-invoice tests (test/einvoice/support.ts): ready for EN 16931, Peppol and XRechnung. */
const SELLER = {
  legal_name: 'Muster Design GmbH',
  address_line1: 'Hauptstraße 1',
  city: 'Berlin',
  postal_code: '10115',
  country: 'DE',
  tax_id: 'DE123456789',
  email: 'billing@muster.example',
  phone: '+49 30 1234567',
  registration_number: 'HRB 12345 B',
  iban: 'DE89370400440532013000',
  bic: 'COBADEFFXXX',
  peppol_id: '9930:DE123456789',
};

const BUYER = {
  name: 'Camille Martin',
  email: 'camille.martin@example.com',
  company: 'Atelier Martin SARL',
  address: '12 rue de la Paix\nBâtiment B',
  city: 'Paris',
  postal_code: '75002',
  country: 'FR',
  tax_id: 'FR40303265045',
  peppol_id: '9957:FR40303265045',
};

type Format = 'facturx' | 'ubl';

interface Seeded {
  api: string;
  key: string;
  clientId: number;
  invoiceId: number;
}

/** The business and its key through the services (as the CLI makes them), before the server starts. */
async function seedBusiness(): Promise<{ key: string }> {
  if (databaseUrl.startsWith('mysql')) await recreateMysqlDatabase(databaseUrl);
  const db = Database.open(databaseUrl);
  try {
    await db.migrate();
    const services = createServices(db, loadConfig({ DATABASE_URL: databaseUrl, APP_SECRET_KEY: appSecretKey }));
    const business = await services.businesses.create({ name: 'Muster Design', currency: 'EUR', country: 'DE' });
    await services.businesses.update(business.id, validateInput(businessChangesSchema, SELLER));
    const { key } = await services.keys.create({ businessId: business.id, mode: 'test', scopes: [...ALL_SCOPES] });
    return { key };
  } finally {
    await db.close();
  }
}

/** `method path` on the API with the key; anything but `status` throws. */
async function call(api: string, key: string, method: string, url: string, status: number, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${api}${url}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (res.status !== status) throw new Error(`${method} ${url}: expected ${status}, got ${res.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** The tax rates, the client and the issued 60-line invoice, through the API. */
async function seedInvoice(api: string, key: string): Promise<Seeded> {
  const rate = async (body: Record<string, unknown>) => ((await call(api, key, 'POST', '/tax-rates', 201, body)).tax_rate as { id: number }).id;
  const rates = [
    await rate({ display_name: 'VAT', percentage: 19 }),
    await rate({ display_name: 'VAT reduced', percentage: 7 }),
    await rate({ display_name: 'Zero rated', percentage: 0, category: 'Z' }),
  ];
  const client = (await call(api, key, 'POST', '/clients', 201, BUYER)).client as { id: number };
  const items = Array.from({ length: 60 }, (_, i) => ({ description: `Item ${i + 1}`, quantity: (i % 4) + 1, unit_price: 1.05 + i, tax_rate_ids: [rates[i % 3]] }));
  const draft = (await call(api, key, 'POST', '/invoices', 201, { client_id: client.id, due_date: '2027-01-31', buyer_reference: 'PO-2026-118', items })).invoice as { id: number };
  await call(api, key, 'POST', `/invoices/${draft.id}/initiate-payment`, 200);
  return { api, key, clientId: client.id, invoiceId: draft.id };
}

/** Each URL answers as the load expects it to: the client's JSON, a Factur-X PDF carrying factur-x.xml, a UBL invoice. */
async function check(s: Seeded): Promise<string> {
  const get = async (url: string, type: string) => {
    const res = await fetch(`${s.api}${url}`, { headers: { authorization: `Bearer ${s.key}` } });
    const content = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200 || !res.headers.get('content-type')?.startsWith(type)) {
      throw new Error(`GET ${url}: ${res.status} ${res.headers.get('content-type')}: ${content.toString('utf8').slice(0, 500)}`);
    }
    return content;
  };
  const client = await get(`/clients/${s.clientId}`, 'application/json');
  const pdf = await get(`/invoices/${s.invoiceId}/einvoice?format=facturx`, 'application/pdf');
  if (!pdf.subarray(0, 8).toString('latin1').startsWith('%PDF-1.7') || !pdf.includes('factur-x.xml')) throw new Error('the Factur-X answer is not a PDF 1.7 carrying factur-x.xml');
  const ubl = await get(`/invoices/${s.invoiceId}/einvoice?format=ubl`, 'application/xml');
  if (!ubl.toString('utf8').includes('<Invoice')) throw new Error('the UBL answer is not a UBL invoice');
  return `answers: client ${client.length} B, Factur-X PDF ${(pdf.length / 1024).toFixed(0)} KiB, UBL ${(ubl.length / 1024).toFixed(0)} KiB`;
}

/** CPU seconds so far (user + system) in a /proc stat file; 0 where there is none. Clock ticks are 100 a second. */
function statSeconds(file: string): number {
  try {
    const fields = fs.readFileSync(file, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** The machine's busy and total CPU seconds so far, over every CPU (/proc/stat; idle and iowait are not busy). */
function machineSeconds(): { busy: number; total: number } {
  const ticks = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].split(/\s+/).slice(1).map(Number);
  const total = ticks.reduce((a, b) => a + (b || 0), 0);
  return { busy: (total - ticks[3] - ticks[4]) / 100, total: total / 100 };
}

interface CpuSnapshot {
  process: number;
  main: number;
  bench: number;
  machine: { busy: number; total: number };
  at: number;
}

function cpuSnapshot(pid: number): CpuSnapshot {
  const usage = process.cpuUsage();
  return {
    process: statSeconds(`/proc/${pid}/stat`),
    main: statSeconds(`/proc/${pid}/task/${pid}/stat`),
    bench: (usage.user + usage.system) / 1e6,
    machine: machineSeconds(),
    at: performance.now(),
  };
}

/** CPU used per second of the window, in cores. */
interface CpuUse {
  main: number;
  others: number;
  bench: number;
  machine: number;
}

function cpuBetween(a: CpuSnapshot, b: CpuSnapshot): CpuUse {
  const seconds = (b.at - a.at) / 1000;
  const cores = os.availableParallelism();
  return {
    main: (b.main - a.main) / seconds,
    others: (b.process - a.process - (b.main - a.main)) / seconds,
    bench: (b.bench - a.bench) / seconds,
    machine: ((b.machine.busy - a.machine.busy) / (b.machine.total - a.machine.total)) * cores,
  };
}

interface Phase {
  /** GET /clients/{id}: absent in the phases of e-invoices alone. */
  clients?: { rps: number; p50: number; p99: number; errors: number };
  /** The e-invoices answered 200 inside the window, per second, and their latency; others: every other answer by status. */
  einvoices?: { perSecond: number; p50: number; p99: number; others: Map<string, number> };
  cpu: CpuUse;
}

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Waits until the server has used under 5 % of a core for 0.5 s (PDFs queued before the load stopped are made), at most 30 s. */
async function quiet(pid: number): Promise<void> {
  for (let deadline = performance.now() + 30_000, calm = 0; calm < 2 && performance.now() < deadline; ) {
    const before = statSeconds(`/proc/${pid}/stat`);
    await sleep(250);
    calm = statSeconds(`/proc/${pid}/stat`) - before < 0.0125 ? calm + 1 : 0;
  }
}

/**
 * One phase of DURATION seconds: GET /clients/{id} alone (no `format`), or while EINVOICE_CONNECTIONS
 * fetch the invoice in `format`, or (`clients` false) those e-invoices alone.
 */
async function phase(s: Seeded, pid: number, format?: Format, clients = true): Promise<Phase> {
  const headers = { authorization: `Bearer ${s.key}` };
  const answered: { at: number; status: number; ms: number }[] = [];
  let background: autocannon.Instance | undefined;
  let backgroundDone: Promise<void> = Promise.resolve();
  if (format) {
    backgroundDone = new Promise<void>((resolve) => {
      background = autocannon(
        { url: `${s.api}/invoices/${s.invoiceId}/einvoice?format=${format}`, connections: EINVOICE_CONNECTIONS, duration: DURATION + 60, headers, timeout: 30 },
        () => resolve(),
      );
    });
    background!.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => answered.push({ at: performance.now(), status, ms }));
    await sleep(LEAD_MS);
  }
  const before = cpuSnapshot(pid);
  let result: autocannon.Result | undefined;
  if (clients) result = await autocannon({ url: `${s.api}/clients/${s.clientId}`, connections: CONNECTIONS, duration: DURATION, headers });
  else await sleep(DURATION * 1000);
  const after = cpuSnapshot(pid);
  background?.stop();
  await backgroundDone;
  await quiet(pid);

  const measured: Phase = { cpu: cpuBetween(before, after) };
  if (result) {
    const ok = result.statusCodeStats?.['200']?.count ?? 0;
    measured.clients = { rps: ok / result.duration, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.non2xx };
  }
  if (format) {
    const inside = answered.filter(({ at }) => at >= before.at && at <= after.at);
    const others = new Map<string, number>();
    for (const { status } of inside) if (status !== 200) others.set(String(status), (others.get(String(status)) ?? 0) + 1);
    const latencies = inside.filter(({ status }) => status === 200).map(({ ms }) => ms).sort((a, b) => a - b);
    measured.einvoices = { perSecond: latencies.length / ((after.at - before.at) / 1000), p50: percentile(latencies, 50), p99: percentile(latencies, 99), others };
  }
  return measured;
}

const pad = (text: string, width: number) => text.padStart(width);
const cores = (n: number) => n.toFixed(2);

function describe(name: string, p: Phase, alone?: Phase): string {
  const parts = [name.padEnd(22)];
  const c = p.clients;
  if (c) parts.push(`clients ${pad(c.rps.toFixed(0), 6)} req/s p50 ${pad(String(c.p50), 3)} ms p99 ${pad(String(c.p99), 4)} ms${alone?.clients ? ` (${(c.rps / alone.clients.rps).toFixed(2)}×)` : '        '}`);
  if (p.einvoices) {
    const e = p.einvoices;
    const others = [...e.others].map(([status, n]) => `${status}×${n}`).join(', ');
    parts.push(`${c ? '| ' : ''}e-invoices ${pad(e.perSecond.toFixed(1), 6)}/s p50 ${pad(e.p50.toFixed(0), 5)} ms p99 ${pad(e.p99.toFixed(0), 5)} ms${others ? ` (other answers: ${others})` : ''}`);
    // Alone, all the server's CPU is the e-invoices': what each costs the request thread and the others.
    if (!c) parts.push(`| CPU per document: request thread ${(p.cpu.main / e.perSecond * 1000).toFixed(1)} ms, other threads ${(p.cpu.others / e.perSecond * 1000).toFixed(1)} ms`);
  }
  parts.push(`| CPU cores: server main ${cores(p.cpu.main)}, other threads ${cores(p.cpu.others)}, load ${cores(p.cpu.bench)}, machine ${cores(p.cpu.machine)}/${os.availableParallelism()}`);
  if (c?.errors) parts.push(`| clients errors ${c.errors}`);
  return `${parts.join(' ')}\n`;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** The phase whose figures are each the median of the rounds'. */
function medianOf(phases: Phase[]): Phase {
  const m = (pick: (p: Phase) => number) => median(phases.map(pick));
  const others = new Map<string, number>();
  for (const p of phases) for (const [status, n] of p.einvoices?.others ?? []) others.set(status, (others.get(status) ?? 0) + n);
  return {
    clients: phases[0].clients && {
      rps: m((p) => p.clients!.rps),
      p50: m((p) => p.clients!.p50),
      p99: m((p) => p.clients!.p99),
      errors: phases.reduce((n, p) => n + p.clients!.errors, 0),
    },
    einvoices: phases[0].einvoices && { perSecond: m((p) => p.einvoices!.perSecond), p50: m((p) => p.einvoices!.p50), p99: m((p) => p.einvoices!.p99), others },
    cpu: { main: m((p) => p.cpu.main), others: m((p) => p.cpu.others), bench: m((p) => p.cpu.bench), machine: m((p) => p.cpu.machine) },
  };
}

async function main(): Promise<void> {
  const { key } = await seedBusiness();
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    DATABASE_URL: databaseUrl,
    APP_SECRET_KEY: appSecretKey,
    RATE_LIMIT_PER_MINUTE: '1000000000',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    MAIL_OUTBOX_DIR: path.join(scratch, 'outbox'),
    ...(PDF_THREADS ? { PDF_THREADS: String(PDF_THREADS) } : {}),
  };
  const threads = loadConfig({ ...process.env, ...env }).pdfThreads;
  const server = await startProcess([BIN, 'serve', '--port', String(port)], env, port);
  let failed = false;
  try {
    const s = await seedInvoice(`http://127.0.0.1:${port}/api/v1/partner`, key);
    const out = process.stdout;
    out.write(
      `${databaseUrl.startsWith('mysql') ? 'MariaDB' : 'SQLite (embedded)'}, one server process, PDF_THREADS ${threads}${PDF_THREADS ? '' : ' (default)'}, ` +
        `${os.availableParallelism()} CPUs (load average ${os.loadavg().map((n) => n.toFixed(2)).join(' ')}); GET /clients/${s.clientId} with ${CONNECTIONS} connections, ` +
        `${DURATION} s a phase, ${ROUNDS} rounds; beside it ${EINVOICE_CONNECTIONS} connections fetch invoice ${s.invoiceId} (60 lines, 3 rates)\n`,
    );
    out.write(`${await check(s)}\n`);
    // Warm-up outside the measurement: JIT, the key cache, the PDF threads and their fonts.
    for (const format of ['facturx', 'ubl'] as const) {
      const warm = await autocannon({ url: `${s.api}/invoices/${s.invoiceId}/einvoice?format=${format}`, connections: EINVOICE_CONNECTIONS, duration: 2, headers: { authorization: `Bearer ${key}` } });
      if (warm.non2xx || warm.errors) throw new Error(`warm-up of ${format}: ${warm.non2xx} non-2xx answers, ${warm.errors} errors`);
    }
    await autocannon({ url: `${s.api}/clients/${s.clientId}`, connections: CONNECTIONS, duration: 2, headers: { authorization: `Bearer ${key}` } });
    await quiet(server.pid!);

    const runs: Record<'alone' | Format, Phase[]> = { alone: [], facturx: [], ubl: [] };
    for (let round = 1; round <= ROUNDS; round += 1) {
      const alone = await phase(s, server.pid!);
      runs.alone.push(alone);
      out.write(describe(`round ${round} alone`, alone));
      for (const format of ['facturx', 'ubl'] as const) {
        const loaded = await phase(s, server.pid!, format);
        runs[format].push(loaded);
        out.write(describe(`round ${round} + ${EINVOICE_CONNECTIONS} ${format}`, loaded, alone));
      }
    }
    const alone = medianOf(runs.alone);
    const facturx = medianOf(runs.facturx);
    const ubl = medianOf(runs.ubl);
    out.write(`\nMedians of ${ROUNDS} rounds (ratio: clients' req/s under the load / alone, medians of each)\n`);
    out.write(describe('alone', alone));
    out.write(describe(`+ ${EINVOICE_CONNECTIONS} facturx`, facturx, alone));
    out.write(describe(`+ ${EINVOICE_CONNECTIONS} ubl`, ubl, alone));
    out.write(`\nThe e-invoices alone, without the clients' load (${DURATION} s each): what each document costs which thread\n`);
    const einvoicesAlone = [];
    for (const format of ['facturx', 'ubl'] as const) {
      einvoicesAlone.push(await phase(s, server.pid!, format, false));
      out.write(describe(`${EINVOICE_CONNECTIONS} ${format} alone`, einvoicesAlone[einvoicesAlone.length - 1]));
    }
    const ratio = facturx.clients!.rps / alone.clients!.rps;
    const perRound = runs.facturx.map((p, i) => (p.clients!.rps / runs.alone[i].clients!.rps).toFixed(2)).join(', ');
    out.write(
      `\nTarget: GET /clients/{id} keeps ≥ ${TARGET}× its own throughput while ${EINVOICE_CONNECTIONS} connections fetch Factur-X: ` +
        `${ratio.toFixed(2)}× (rounds: ${perRound}) — ${ratio >= TARGET ? 'holds' : 'does NOT hold'}\n`,
    );
    out.write(`With ${EINVOICE_CONNECTIONS} connections fetching UBL (XML on the document threads): ${(ubl.clients!.rps / alone.clients!.rps).toFixed(2)}×\n`);
    failed = [alone, facturx, ubl, ...einvoicesAlone].some((p) => p.clients?.errors || p.einvoices?.others.size);
  } finally {
    server.kill('SIGTERM');
  }
  if (failed) {
    process.stderr.write('some requests failed or answered another status than 200 (see above)\n');
    process.exitCode = 1;
  }
}

main().then(
  () => fs.rmSync(scratch, { recursive: true, force: true }),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
