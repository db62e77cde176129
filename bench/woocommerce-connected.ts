/**
 * Stores connected to the server against the bridge run apart, in the same run: `invoicing serve`
 * processes on one database behind a round-robin balancer at BASE_URL (three on MariaDB, one on the
 * embedded database, which is for one process); store A connected
 * through WooCommerce's callback (the server's bridge), store B through `woo connect` and a `woo
 * serve` process (the baseline); both strict WooCommerce doubles in this process. Each store's
 * orders are completed in a burst, then one at a time; the time from the completion to the
 * invoice's mark on the order is measured per order.
 *   npm run build && npm run bench:woocommerce-connected [-- --orders 60]
 * BENCH_DATABASE_URL=mysql://… runs it on MariaDB (the database is dropped and made again).
 * The rate limit is raised (RATE_LIMIT_PER_MINUTE 100000): what is measured is the bridges' own
 * latency and pace, not the API's 120 requests a minute (bench:woocommerce measures that bound).
 */
import { ChildProcess, execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../server/config';
import { Database } from '../server/db/database';
import { createServices } from '../server/services';
import { MARKS } from '../plugin/woocommerce/order';
import { startBalancer } from '../test/support/balancer';
import { freePort } from '../test/support/net';
import { companyOnlyOrder, guestJpyOrder, OrderInput, registeredEurOrder, startWooStore, WooStore } from '../test/support/woocommerce';
import { numberOption, recreateMysqlDatabase, startProcess } from './support';

const ORDERS = numberOption('orders', 60);
const dist = path.resolve(__dirname, '..');
const BIN = path.join(dist, 'bin/invoicing.js');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-woo-connected-'));
const databaseUrl = process.env.BENCH_DATABASE_URL ?? `sqlite:${path.join(scratch, 'invoicing.sqlite3')}`;
const appSecretKey = randomBytes(32).toString('base64');

function anOrder(i: number): OrderInput {
  const fixture = [registeredEurOrder, companyOnlyOrder, guestJpyOrder][i % 3]();
  return { ...fixture, billing: { ...fixture.billing, email: `buyer-${i % 20}@example.com` } };
}

/**
 * Completes the orders (placed beforehand), `spacingMs` apart, and resolves with each one's time to
 * its invoice mark (ms). One watcher reads the store every 10 ms for all of them: the double renders
 * every order on each read, and a watcher per order would slow the store it measures.
 */
async function timeOrders(store: WooStore, ids: number[], spacingMs: number): Promise<number[]> {
  const completedAt = new Map<number, number>();
  const took = new Map<number, number>();
  const completing = (async () => {
    for (const id of ids) {
      completedAt.set(id, performance.now());
      store.updateOrder(id, { status: 'completed' });
      if (spacingMs) await new Promise((r) => setTimeout(r, spacingMs));
    }
  })();
  const started = performance.now();
  while (took.size < ids.length) {
    if (performance.now() - started > 180_000) throw new Error(`${ids.length - took.size} orders not invoiced within 180 s`);
    await new Promise((r) => setTimeout(r, 10));
    const now = performance.now();
    for (const order of store.orders) {
      const at = completedAt.get(order.id);
      if (at !== undefined && !took.has(order.id) && order.meta_data.some((m) => m.key === MARKS.invoice)) took.set(order.id, now - at);
    }
  }
  await completing;
  return ids.map((id) => took.get(id)!);
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const describe = (ms: number[]) => `p50 ${percentile(ms, 50).toFixed(0)} ms, p95 ${percentile(ms, 95).toFixed(0)} ms, max ${Math.max(...ms).toFixed(0)} ms`;

async function main(): Promise<void> {
  if (databaseUrl.startsWith('mysql')) await recreateMysqlDatabase(databaseUrl);
  const db = Database.open(databaseUrl);
  await db.migrate();
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const env = { DATABASE_URL: databaseUrl, APP_SECRET_KEY: appSecretKey, BASE_URL: baseUrl, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '100000', WEBHOOK_ALLOW_PRIVATE: 'true' };
  const children: ChildProcess[] = [];
  const stores: WooStore[] = [];
  try {
    const ports = await Promise.all(Array.from({ length: databaseUrl.startsWith('mysql') ? 3 : 1 }, () => freePort()));
    for (const p of ports) children.push(await startProcess([BIN, 'serve', '--port', String(p)], env, p));
    const balancer = await startBalancer(ports.map((p) => `http://127.0.0.1:${p}`), port);
    const services = createServices(db, loadConfig(env));
    const business = await services.businesses.create({ name: 'Bench Shop', currency: 'EUR' });

    // A: connected to the server, as WooCommerce's callback connects it.
    const connected = await startWooStore({ allowHttpCallback: true });
    stores.push(connected);
    const link = await services.woocommerce.createLink({ businessId: business.id, mode: 'live', storeUrl: connected.url });
    const callback = await fetch(link.callback_url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key_id: 1, user_id: link.url.split('/').pop(), consumer_key: connected.consumerKey, consumer_secret: connected.consumerSecret, key_permissions: 'read_write' }),
    });
    if (callback.status !== 200) throw new Error(`callback answered ${callback.status}: ${await callback.text()}`);

    // B: the bridge apart, `woo connect` then `woo serve`, calling the same three processes.
    const apart = await startWooStore();
    stores.push(apart);
    const { key } = await services.keys.create({ businessId: business.id, mode: 'live', scopes: ['invoices:write', 'clients:write'] });
    const bridgePort = await freePort();
    const configFile = path.join(scratch, 'woocommerce.json');
    await promisify(execFile)(
      process.execPath,
      [BIN, 'woo', 'connect', '--store-url', apart.url, '--consumer-key', apart.consumerKey, '--consumer-secret', apart.consumerSecret, '--api-key', key, '--api-url', `${baseUrl}/api/v1/partner`, '--bridge-url', `http://127.0.0.1:${bridgePort}`, '--config', configFile],
      { env: { ...process.env, ...env } },
    );
    children.push(await startProcess([BIN, 'woo', 'serve', '--port', String(bridgePort), '--config', configFile], env, bridgePort));

    const place = (store: WooStore) => Array.from({ length: ORDERS }, (_, i) => store.addOrder(anOrder(i)).id);
    const burstA = await timeOrders(connected, place(connected), 0);
    const burstB = await timeOrders(apart, place(apart), 0);
    const steadyA = await timeOrders(connected, place(connected), 100);
    const steadyB = await timeOrders(apart, place(apart), 100);

    process.stdout.write(
      `${ORDERS} orders per run, completed in a burst, then 100 ms apart; completion → invoice mark on the order\n` +
        `connected to the server (${ports.length} process${ports.length > 1 ? 'es' : ''}): burst ${describe(burstA)}; steady ${describe(steadyA)}\n` +
        `bridge apart (woo serve):             burst ${describe(burstB)}; steady ${describe(steadyB)}\n` +
        `ratio (apart / connected, >1 is faster connected): burst p50 ${(percentile(burstB, 50) / percentile(burstA, 50)).toFixed(2)}×, steady p50 ${(percentile(steadyB, 50) / percentile(steadyA, 50)).toFixed(2)}×\n` +
        `requests per server process (balancer): ${[...balancer.served.values()].join(', ')}\n`,
    );
    const invoices = await db.knex('invoices').where({ business_id: business.id }).count({ n: '*' });
    if (Number(invoices[0].n) !== 4 * ORDERS) throw new Error(`${String(invoices[0].n)} invoices for ${4 * ORDERS} orders`);
    await balancer.stop();
  } finally {
    for (const store of stores) await store.stop();
    for (const child of children) child.kill('SIGTERM');
    await db.close();
  }
}

main().then(
  () => fs.rmSync(scratch, { recursive: true, force: true }),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
