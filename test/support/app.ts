/** Starts the real app on an ephemeral port over a scratch database, and seeds businesses and keys. */
import { randomBytes } from 'node:crypto';
import pino, { Logger } from 'pino';
import { Scope, ALL_SCOPES } from '../../server/auth/scopes';
import { Clock } from '../../server/clock';
import { Config, loadConfig } from '../../server/config';
import { Database } from '../../server/db/database';
import { RunningServer, startServer } from '../../server/server';
import { Api } from './http';
import { scratchDatabase, ScratchDatabase } from './database';

export interface Tenant {
  businessId: number;
  key: string;
  keyId: number;
  api: Api;
}

export interface TestApp {
  url: string;
  databaseUrl: string;
  server: RunningServer;
  db: Database;
  api(key?: string): Api;
  /** A new business with one key (test mode and every scope unless told otherwise). */
  tenant(options?: {
    mode?: 'test' | 'live';
    scopes?: Scope[];
    businessId?: number;
    currency?: string;
    webhookUrl?: string;
    webhookSecret?: string;
  }): Promise<Tenant>;
  stop(): Promise<void>;
}

/** One application key per test file (apps restarted over the same database open its secrets); never ./data/app-secret.key. */
export const TEST_APP_SECRET_KEY = randomBytes(32).toString('base64');

export async function startApp(
  overrides: Partial<Config> = {},
  options: { keepDatabase?: ScratchDatabase; logger?: Logger; clock?: Clock; webhookTimeoutMs?: number } = {},
): Promise<TestApp> {
  const scratch = options.keepDatabase ?? (await scratchDatabase({ migrated: true }));
  const config: Config = {
    ...loadConfig({ DATABASE_URL: scratch.url, LOG_LEVEL: 'silent', WEBHOOK_ALLOW_PRIVATE: 'true', APP_SECRET_KEY: TEST_APP_SECRET_KEY }),
    port: 0,
    host: '127.0.0.1',
    ...overrides,
  };
  // knex's connection warnings go to the test's logger (silent unless a test gives one), not the console.
  const db = Database.open(config.databaseUrl, { logger: options.logger ?? pino({ level: 'silent' }), busyTimeoutMs: config.databaseBusyTimeoutMs });
  let server: RunningServer;
  try {
    await db.migrate();
    server = await startServer(config, {
      logger: options.logger ?? pino({ level: 'silent' }),
      db,
      scheduler: false,
      clock: options.clock,
      webhookTimeoutMs: options.webhookTimeoutMs,
      // Longer than any stall of this process's event loop (see the option), and under the 60 s headersTimeout.
      keepAliveTimeoutMs: 30_000,
    });
  } catch (err) {
    await db.close();
    if (!options.keepDatabase) await scratch.drop();
    throw err;
  }
  const app: TestApp = {
    url: server.url,
    databaseUrl: scratch.url,
    server,
    db,
    api: (key) => new Api(server.url, key),
    async tenant({ mode = 'test', scopes = [...ALL_SCOPES], businessId, currency = 'USD', webhookUrl, webhookSecret } = {}) {
      const id = businessId ?? (await server.services.businesses.create({ name: 'Test Business', currency, country: 'US' })).id;
      const created = await server.services.keys.create({ businessId: id, mode, scopes, webhookUrl, webhookSecret });
      return { businessId: id, key: created.key, keyId: created.id, api: new Api(server.url, created.key) };
    },
    async stop() {
      await server.stop();
      await db.close();
      if (!options.keepDatabase) await scratch.drop();
    },
  };
  return app;
}

let counter = 0;
/** A valid client body with a unique e-mail. */
export function aClient(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  counter += 1;
  return { name: `Client ${counter}`, email: `client${counter}.${Date.now()}@example.com`, ...overrides };
}

/** Registers hooks that start one app (and one tenant with every scope) for the test file, and stop it after. */
export function useApp(overrides: Partial<Config> = {}): { app: TestApp; t: Tenant } {
  const ctx = {} as { app: TestApp; t: Tenant };
  beforeAll(async () => {
    ctx.app = await startApp(overrides);
    ctx.t = await ctx.app.tenant();
  });
  afterAll(() => ctx.app?.stop());
  return ctx;
}

/** A valid draft-invoice body for `clientId`: three lines totalling 150.00. */
export function anInvoice(clientId: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    client_id: clientId,
    currency: 'USD',
    due_date: '2099-12-31',
    items: [
      { description: 'Design', quantity: 2, unit_price: 50 },
      { description: 'Hosting', quantity: 1, unit_price: 30 },
      { description: 'Domain', quantity: 1, unit_price: 20 },
    ],
    ...overrides,
  };
}

/** A client and a draft invoice of the tenant; returns the invoice as created. */
export async function aDraft(t: Tenant, overrides: Record<string, unknown> = {}): Promise<any> {
  const client = await t.api.post('/clients', aClient());
  const res = await t.api.post('/invoices', anInvoice(client.body.client.id, overrides));
  if (res.status !== 201) throw new Error(`could not create a draft: ${res.status} ${res.text}`);
  return res.body.invoice;
}

/** The outbox rows of a business, oldest first, with their data parsed. */
export async function eventsOf(app: TestApp, businessId: number): Promise<{ type: string; livemode: boolean; idempotency_key: string; data: any }[]> {
  const rows = await app.db.knex('events').where('business_id', businessId).orderBy('id');
  return rows.map((row: any) => ({ ...row, livemode: Boolean(Number(row.livemode)), data: JSON.parse(row.data) }));
}
