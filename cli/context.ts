/** Opens the configured database for one CLI command, with the same services the server uses. */
import { loadConfig, Config } from '../server/config';
import { Database } from '../server/db/database';
import { prepareSchema } from '../server/server';
import { createServices, Services } from '../server/services';

export interface CliContext {
  config: Config;
  db: Database;
  services: Services;
}

export async function withContext<T>(work: (ctx: CliContext) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const db = Database.open(config.databaseUrl);
  try {
    await prepareSchema(db);
    return await work({ config, db, services: createServices(db, config) });
  } finally {
    await db.close();
  }
}

/** Prints `value` as JSON with --json, or the human-readable lines otherwise. */
export function output(json: boolean | undefined, value: unknown, human: () => string[]): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${human().join('\n')}\n`);
}
