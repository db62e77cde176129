/** What the benchmarks share: their numeric options, a scratch MariaDB database, starting a server process. */
import { ChildProcess, spawn } from 'node:child_process';
import knexFactory from 'knex';
import { mysqlConnection } from '../server/db/connection';

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
