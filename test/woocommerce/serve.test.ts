/**
 * `invoicing woo connect` and `invoicing woo serve` as real processes, against a WooCommerce double
 * served over https with a self-signed certificate (so the client must use Basic auth, as WooCommerce
 * requires there) and the real partner API.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startApp, Tenant, TestApp, TEST_APP_SECRET_KEY } from '../support/app';
import { BIN, requireBuild, runCli } from '../support/cli';
import { eventually } from '../support/eventually';
import { freePort } from '../support/net';
import { companyOnlyOrder, startWooStore, WooStore } from '../support/woocommerce';

let app: TestApp;
let store: WooStore;
let tenant: Tenant;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  requireBuild();
  app = await startApp();
  store = await startWooStore({ https: true });
  tenant = await app.tenant({ scopes: ['invoices:write', 'clients:write'] });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'woo-serve-'));
  fs.writeFileSync(path.join(dir, 'store-ca.pem'), store.ca!);
  // The store's self-signed certificate is trusted the way an operator would: NODE_EXTRA_CA_CERTS.
  env = { NODE_EXTRA_CA_CERTS: path.join(dir, 'store-ca.pem'), LOG_LEVEL: 'info' };
});

afterAll(async () => {
  await store?.stop();
  await app?.stop();
});

function connect(port: number) {
  return runCli(
    app.databaseUrl,
    [
      'woo', 'connect',
      '--store-url', store.url,
      '--consumer-key', store.consumerKey,
      '--consumer-secret', store.consumerSecret,
      '--api-key', tenant.key,
      '--api-url', `${app.url}/api/v1/partner`,
      '--bridge-url', `http://127.0.0.1:${port}`,
      '--config', path.join(dir, 'woocommerce.json'),
    ],
    env,
  );
}

test('when a store on https is connected and the bridge runs, then completed orders are invoiced and paid, refusals are logged with the order id, and it stops cleanly', async () => {
  const port = await freePort();
  const first = await connect(port);
  const again = await connect(port);
  expect(first.code).toBe(0);
  expect(again.code).toBe(0);
  expect(store.webhooks).toHaveLength(1);
  expect(store.requests.filter((r) => r.path.startsWith('/wp-json/')).every((r) => r.auth === 'basic')).toBe(true);

  const child = spawn(process.execPath, [BIN, 'woo', 'serve', '--port', String(port), '--config', path.join(dir, 'woocommerce.json')], {
    env: { PATH: process.env.PATH, APP_SECRET_KEY: TEST_APP_SECRET_KEY, ...env },
  });
  let logs = '';
  child.stdout.on('data', (d) => (logs += d));
  child.stderr.on('data', (d) => (logs += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  try {
    await eventually(() => logs.includes('WooCommerce bridge listening'));

    const good = store.addOrder(companyOnlyOrder());
    const noEmail = store.addOrder(companyOnlyOrder({ billing: { company: 'Nobody Ltd', email: '' } }));
    store.updateOrder(good.id, { status: 'completed' });
    store.updateOrder(noEmail.id, { status: 'completed' });

    await eventually(() => store.orders.find((o) => o.id === good.id)!.meta_data.some((m) => m.key === '_invoicing_invoice_id'));
    await eventually(() => logs.includes('order refused'));
    const refusal = logs
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line))
      .find((entry) => entry.msg === 'order refused');
    expect(refusal).toMatchObject({ order_id: noEmail.id, reason: expect.stringMatching(/no billing e-mail/) });
    const invoices = await app.db.knex('invoices').where({ business_id: tenant.businessId });
    expect(invoices).toHaveLength(1);
    expect(invoices[0].status).toBe('paid');
  } finally {
    child.kill('SIGTERM');
  }
  expect(await exited).toBe(0);
});
