/**
 * Opens the configured database for one CLI command, with the same services the server uses. The
 * settings, the database and the services are required when a command runs, not when its module
 * loads: a command's help (`keys create --help`) needs none of them.
 */
import type { Config } from '../server/config';
import type { Database } from '../server/db/database';
import type { Services } from '../server/services';
import type { BusinessView } from '../server/businesses/schema';
import { CliFailure, redactUrls, UsageError } from './errors';
import { cliIo } from './io';
import type { Choice, OptionSpec } from './prompt';

/**
 * The server's modules a command runs with, required when it runs: the command modules take them
 * from here rather than import them, so that a command's help loads none of them.
 */
/* eslint-disable @typescript-eslint/no-require-imports -- required when a command runs (see above) */
export const atRun = {
  config: () => require('../server/config') as typeof import('../server/config'),
  database: () => require('../server/db/database') as typeof import('../server/db/database'),
  services: () => require('../server/services') as typeof import('../server/services'),
  appKey: () => require('../server/keys/app-key') as typeof import('../server/keys/app-key'),
  server: () => require('../server/server') as typeof import('../server/server'),
};
/* eslint-enable @typescript-eslint/no-require-imports */

export interface CliContext {
  config: Config;
  db: Database;
  services: Services;
}

/** The settings, or a one-line failure naming the bad ones (without any password they hold). */
export function cliConfig(): Config {
  const { loadConfig, ConfigError } = atRun.config();
  try {
    return loadConfig(cliIo().env);
  } catch (err) {
    if (err instanceof ConfigError) throw new CliFailure(redactUrls(err.message));
    throw err;
  }
}

/** Why the database cannot be used, in one line a person can act on. */
function databaseProblem(err: unknown, databaseUrl: string): string {
  const e = err as { code?: string; message?: string };
  const where = redactUrls(databaseUrl);
  switch (e.code) {
    case 'ECONNREFUSED':
      return `cannot connect to the database at ${where}: connection refused (is the database server running?)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `cannot connect to the database at ${where}: host not found`;
    case 'ETIMEDOUT':
      return `cannot connect to the database at ${where}: timed out`;
    case 'ER_ACCESS_DENIED_ERROR':
    case 'ER_DBACCESS_DENIED_ERROR':
      return `the database at ${where} refused the user name or password`;
    case 'ER_BAD_DB_ERROR':
      return `the database at ${where} does not exist (create it, then run \`invoicing migrate\`)`;
    case 'SQLITE_CANTOPEN':
      return `cannot open the SQLite file of ${where}`;
    default:
      return `cannot use the database at ${where}: ${redactUrls(e.message ?? String(err)).split('\n')[0]}`;
  }
}

/** Opens the database and checks that it answers, so a bad DATABASE_URL is one clear line, not a stack. */
export async function openDatabase(config: Config): Promise<Database> {
  let db: Database;
  try {
    db = atRun.database().Database.open(config.databaseUrl, { quiet: true, busyTimeoutMs: config.databaseBusyTimeoutMs });
  } catch (err) {
    throw new CliFailure(databaseProblem(err, config.databaseUrl));
  }
  try {
    await db.ping();
    return db;
  } catch (err) {
    await db.close();
    throw new CliFailure(databaseProblem(err, config.databaseUrl));
  }
}

/** Every database command: the settings, a working database with no pending migration, and the services. */
export async function withContext<T>(work: (ctx: CliContext) => Promise<T>): Promise<T> {
  const config = cliConfig();
  const db = await openDatabase(config);
  try {
    const { prepareSchema, createServices } = atRun.services();
    await prepareSchema(db, config);
    const services = createServices(db, config);
    // A warning, not a refusal: the commands that do not need the secrets (listing, revoking,
    // the delivery log) still help an operator find out what happened.
    if (!(await services.keys.opensStoredSecrets())) cliIo().stderr.write(`warning: ${atRun.appKey().STORED_SECRETS_UNOPENABLE}\n`);
    return await work({ config, db, services });
  } finally {
    await db.close();
  }
}

/** The businesses to pick from when `--business` is asked on a terminal (`1  Acme Studio (USD)`). */
async function businessChoices(): Promise<Choice[]> {
  const all = await withContext(({ services }) => services.businesses.list());
  if (all.length === 0) throw new CliFailure('there is no business yet: make one with `invoicing init` or `invoicing business create`');
  return all.map((business) => ({ value: String(business.id), name: `${business.id}  ${business.name} (${business.currency})` }));
}

/** `--business`, asked on a terminal as a list of the businesses there are. */
export const BUSINESS_QUESTION: OptionSpec = { key: 'business', flag: '--business', message: 'Business', choices: businessChoices };

/** `--mode`, asked on a terminal as a list. */
export const MODE_QUESTION: OptionSpec = { key: 'mode', flag: '--mode', message: 'Mode', choices: ['test', 'live'] };

/**
 * The business `listen` and `trigger` act for in test mode: `--business`, else the only one, else a
 * new one when there is none (a fresh install needs no option); with several, `--business` is required.
 */
export async function testBusiness(services: Services, flag: number | undefined): Promise<BusinessView & { created: boolean }> {
  if (flag !== undefined) return { ...(await services.businesses.get(flag)), created: false };
  const all = await services.businesses.list();
  if (all.length === 1) return { ...all[0], created: false };
  if (all.length > 1) throw new UsageError(`there are ${all.length} businesses: pass --business <id> (see \`invoicing business list\`)`);
  return { ...(await services.businesses.create({ name: 'My business', currency: 'USD' })), created: true };
}
