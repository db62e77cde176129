/** Starts the real app on an ephemeral port over a scratch database, and seeds businesses and keys. */
import pino, { Logger } from 'pino';
import { Scope, ALL_SCOPES } from '../../server/auth/scopes';
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
  tenant(options?: { mode?: 'test' | 'live'; scopes?: Scope[]; businessId?: number; currency?: string }): Promise<Tenant>;
  stop(): Promise<void>;
}

export async function startApp(
  overrides: Partial<Config> = {},
  options: { keepDatabase?: ScratchDatabase; logger?: Logger } = {},
): Promise<TestApp> {
  const scratch = options.keepDatabase ?? (await scratchDatabase());
  const config: Config = {
    ...loadConfig({ DATABASE_URL: scratch.url, LOG_LEVEL: 'silent', WEBHOOK_ALLOW_PRIVATE: 'true' }),
    port: 0,
    ...overrides,
  };
  const db = Database.open(config.databaseUrl);
  let server: RunningServer;
  try {
    await db.migrate();
    server = await startServer(config, { host: '127.0.0.1', logger: options.logger ?? pino({ level: 'silent' }), db, scheduler: false });
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
    async tenant({ mode = 'test', scopes = [...ALL_SCOPES], businessId, currency = 'USD' } = {}) {
      const id = businessId ?? (await server.services.businesses.create({ name: 'Test Business', currency, country: 'US' })).id;
      const created = await server.services.keys.create({ businessId: id, mode, scopes });
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
