/** What the benchmarks share: their numeric options, a scratch database and its services, starting a server process. */
import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { loadConfig } from '../server/config';
import { mysqlConnection } from '../server/db/connection';
import { Database } from '../server/db/database';
import { createServices, Services } from '../server/services';

/** `--name N` on the command line, else `fallback`. */
export function numberOption(name: string, fallback: number): number {
  const args = process.argv.slice(2);
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args[at + 1]) : fallback;
}

/** Drops and re-creates the database a benchmark's URL names: each run starts empty. */
export async function recreateMysqlDatabase(databaseUrl: string): Promise<void> {
  const name = new URL(databaseUrl).pathname.slice(1);
  const admin = knexFactory({ client: 'mysql2', connection: { ...mysqlConnection(databaseUrl), database: undefined } });
  await admin.raw(`DROP DATABASE IF EXISTS \`${name}\``);
  await admin.raw(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await admin.destroy();
}

/** Node options for the servers a benchmark starts: BENCH_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile them. */
export function serverNodeArgs(): string[] {
  return (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
}

/** Starts a server process and resolves once it answers HTTP. Its output (logs) goes nowhere. */
export async function startProcess(command: string[], env: NodeJS.ProcessEnv, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...serverNodeArgs(), ...command], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`${command.join(' ')} exited with ${code}`))));
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const answered = await Promise.race([
      fetch(`http://127.0.0.1:${port}/`).then(() => true, () => false),
      exited,
    ]);
    if (answered) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error(`${command.join(' ')} did not start`);
}

/**
 * Runs a bench over the services of a scratch database: the embedded SQLite in a temporary file, or
 * MariaDB at BENCH_DATABASE_URL (dropped and made again), migrated; then closes and removes it. A
 * failure is printed and sets the exit code.
 */
export function benchWithServices(name: string, work: (bench: { db: Database; services: Services; databaseUrl: string }) => Promise<void>): void {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), `bench-${name}-`));
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? `sqlite:${path.join(scratch, 'invoicing.sqlite3')}`;
  const run = async () => {
    if (databaseUrl.startsWith('mysql')) await recreateMysqlDatabase(databaseUrl);
    const config = loadConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', APP_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') });
    const db = Database.open(databaseUrl);
    try {
      await db.migrate();
      await work({ db, services: createServices(db, config), databaseUrl });
    } finally {
      await db.close();
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  };
  run().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}

