/**
 * WooCommerce bridge benchmark: a backfill of completed orders paid at checkout through one bridge
 * key, under the API's default rate limit (120 requests a minute per key), the bound that sets the
 * bridge's pace. The API runs as `invoicing serve` with its defaults on a scratch SQLite database
 * (or BENCH_DATABASE_URL, a database of its own), behind a counting proxy; the store is the strict
 * WooCommerce double in this process; the backfill runs as the real `invoicing woo backfill`.
 *   npm run build && npm run bench:woocommerce [-- --orders 300]
 * Prints the backfill's wall time, orders per minute, API calls per order and the 429s met, then
 * checks that every order got one paid invoice.
 */
import { ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../server/config';
import { Database } from '../server/db/database';
import { createServices } from '../server/services';
import { storeIdOf } from '../plugin/woocommerce/connection';
import { CONFIG_FORMAT, writeBridgeConfig } from '../plugin/woocommerce/config';
import { MARKS } from '../plugin/woocommerce/order';
import { startProxy } from '../test/support/proxy';
import { companyOnlyOrder, guestJpyOrder, OrderInput, registeredEurOrder, startWooStore } from '../test/support/woocommerce';
import { numberOption } from './support';

const ORDERS = numberOption('orders', 300);
/** Returning buyers: some orders find their client, others create it. */
const CUSTOMERS = Math.ceil(ORDERS / 3);
const PORT = 4821;
const dist = path.resolve(__dirname, '..');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-woo-'));
const databaseUrl = process.env.BENCH_DATABASE_URL ?? `sqlite:${path.join(scratch, 'invoicing.sqlite3')}`;
// One sealing key for the seeding, the server and the CLI.
const appSecretKey = randomBytes(32).toString('base64');

async function seedKey(): Promise<{ key: string; businessId: number }> {
  const db = Database.open(databaseUrl);
  await db.migrate();
  const services = createServices(db, loadConfig({ DATABASE_URL: databaseUrl, APP_SECRET_KEY: appSecretKey }));
  const business = await services.businesses.create({ name: 'Bench Shop', currency: 'EUR' });
  const { key } = await services.keys.create({ businessId: business.id, mode: 'live', scopes: ['invoices:write', 'clients:write'] });
  await db.close();
  return { key, businessId: business.id };
}

/** The server's environment: this process's, with the rate limit left at its default. */
function serverEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl, APP_SECRET_KEY: appSecretKey, LOG_LEVEL: 'warn' };
  delete env.RATE_LIMIT_PER_MINUTE;
  delete env.REDIS_URL;
  return env;
}

/** Starts `invoicing serve` and resolves once it answers HTTP; its log goes nowhere, its crashes to our stderr. */
async function startServer(): Promise<ChildProcess> {
  const child = spawn(process.execPath, [path.join(dist, 'bin/invoicing.js'), 'serve', '--port', String(PORT)], { env: serverEnv(), stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`the server exited with ${code}`))));
  exited.catch(() => undefined);
  for (let attempt = 0; attempt < 100; attempt += 1) {
    if (await Promise.race([fetch(`http://127.0.0.1:${PORT}/`).then(() => true, () => false), exited])) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error('the server did not start');
}

/** A mix of the fixtures (EUR with coupon and fee, a company in EUR, a guest in JPY), bought by CUSTOMERS people. */
function anOrder(i: number): OrderInput {
  const fixture = [registeredEurOrder, companyOnlyOrder, guestJpyOrder][i % 3]();
  return { ...fixture, status: 'completed', billing: { ...fixture.billing, email: `buyer-${i % CUSTOMERS}@example.com` } };
}

async function main(): Promise<void> {
  const { key, businessId } = await seedKey();
  const server = await startServer();
  const proxy = await startProxy(`http://127.0.0.1:${PORT}`);
  const store = await startWooStore();
  try {
    const since = new Date(Date.now() - 60_000);
    const orders = Array.from({ length: ORDERS }, (_, i) => store.addOrder(anOrder(i)));
    const configFile = path.join(scratch, 'woocommerce.json');
    // What `woo connect` writes, less its webhook: a backfill only reads orders and writes to them.
    writeBridgeConfig(configFile, {
      store_url: store.url,
      consumer_key: store.consumerKey,
      consumer_secret: store.consumerSecret,
      api_url: `${proxy.url}/api/v1/partner`,
      api_key: key,
      bridge_url: 'http://127.0.0.1:9',
      store_id: storeIdOf(store.url),
      webhook_id: 1,
      webhook_secret: randomBytes(32).toString('base64url'),
      connected_at: new Date().toISOString(),
      format: CONFIG_FORMAT,
    });

    const started = Date.now();
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [path.join(dist, 'bin/invoicing.js'), 'woo', 'backfill', '--since', since.toISOString(), '--config', configFile, '--json'],
      { env: serverEnv(), timeout: 30 * 60_000, maxBuffer: 64 * 1024 * 1024 },
    );
    const seconds = (Date.now() - started) / 1000;

    const result = JSON.parse(stdout) as { checked: number; invoiced: number; paid: number; failed: number };
    const calls = proxy.requests.filter((r) => r.status !== 429).length;
    const limited = proxy.requests.length - calls;
    process.stdout.write(
      `${ORDERS} completed orders paid at checkout, ${CUSTOMERS} buyers; one live key at the default limit of 120 requests a minute\n` +
        `backfill: ${seconds.toFixed(1)} s wall time, ${((result.invoiced / seconds) * 60).toFixed(1)} orders/min\n` +
        `API calls: ${calls} answered (${(calls / ORDERS).toFixed(2)} per order), ${limited} answered 429 and retried after Retry-After\n` +
        `result: ${JSON.stringify(result)}\n`,
    );

    const unfinished = orders.filter((o) => {
      const meta = store.orders.find((s) => s.id === o.id)!.meta_data;
      return ![MARKS.invoice, MARKS.payment].every((mark) => meta.some((m) => m.key === mark));
    });
    const db = Database.open(databaseUrl);
    const paid = await db.knex('invoices').where({ business_id: businessId, status: 'paid' }).count({ n: '*' });
    await db.close();
    if (unfinished.length || result.failed || Number(paid[0].n) !== ORDERS) {
      throw new Error(`not every order got one paid invoice: ${unfinished.length} orders unmarked, ${String(paid[0].n)} paid invoices, ${result.failed} failed`);
    }
  } finally {
    await store.stop();
    await proxy.stop();
    server.kill('SIGTERM');
  }
}

main().then(
  () => fs.rmSync(scratch, { recursive: true, force: true }),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
