/**
 * The `invoicing` program for the tests: the compiled binary (dist/, built by `npm test`'s pretest)
 * as a child process, or the same program run in this process with its own environment and
 * streams (cli/io.ts), which spares each command the half second a new process spends loading it.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { run as runProgram } from '../../cli';
import { startApp, Tenant, TEST_APP_SECRET_KEY, TestApp } from './app';

export const BIN = path.resolve(__dirname, '../../dist/bin/invoicing.js');
const execute = promisify(execFile);

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function requireBuild(): void {
  if (!fs.existsSync(BIN)) throw new Error('dist/ is missing: `npm test` builds it first (npm run build)');
}

/** The environment a command gets: PATH, the database, the test app's APP_SECRET_KEY, then `env` (`undefined` unsets one). */
function commandEnv(databaseUrl: string, env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const all = { PATH: process.env.PATH, DATABASE_URL: databaseUrl, APP_SECRET_KEY: TEST_APP_SECRET_KEY, ...env };
  return Object.fromEntries(Object.entries(all).filter(([, value]) => value !== undefined));
}

/**
 * `invoicing <args>` against `databaseUrl`, with the test app's APP_SECRET_KEY so secrets the CLI
 * seals open in the app and the other way round; `env` adds or overrides variables (`undefined`
 * unsets one), `cwd` is the working directory (default: this process's), `input` is written to
 * its standard input (a password for `--password-stdin`).
 */
type CliRunner = (
  databaseUrl: string,
  args: string[],
  env?: Record<string, string | undefined>,
  timeoutMs?: number,
  cwd?: string,
  input?: string,
) => Promise<CliResult>;

/** The compiled binary, for what only a process shows (its exit, its start, a second writer, a working directory). */
export const runBinary: CliRunner = async (databaseUrl, args, env = {}, timeoutMs = 30_000, cwd, input) => {
  try {
    const pending = execute(process.execPath, [BIN, ...args], { env: commandEnv(databaseUrl, env), timeout: timeoutMs, cwd });
    if (input !== undefined) pending.child.stdin?.end(input);
    const { stdout, stderr } = await pending;
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
};

/** Commands that keep running until stopped: only a process of their own can run them. */
const RUNS_UNTIL_STOPPED = [['serve'], ['woo', 'serve'], ['webhooks', 'listen']];

/**
 * The commands run in this process, one at a time: SQLite waits for a busy database by blocking
 * its thread, so a command waiting for another's write in the same process would wait for ever.
 */
let previousRun: Promise<unknown> = Promise.resolve();

/**
 * `invoicing <args>` as runBinary runs it, run by the program's code in this process: the same
 * environment, standard input, output and exit code, without the process. A working directory, a
 * command that runs until stopped, or a variable for Node itself still gets the binary. Runs
 * started together run in turn.
 */
export const runCli: CliRunner = async (databaseUrl, args, env = {}, timeoutMs = 30_000, cwd, input) => {
  const words = args.filter((arg) => !arg.startsWith('-'));
  const runsUntilStopped = RUNS_UNTIL_STOPPED.some((command) => command.every((word, i) => words[i] === word));
  // NODE_EXTRA_CA_CERTS, NODE_OPTIONS…: Node reads them as a process starts.
  const startsNode = Object.keys(env).some((name) => name.startsWith('NODE_'));
  if (cwd !== undefined || runsUntilStopped || startsNode) {
    return runBinary(databaseUrl, args, env, timeoutMs, cwd, input);
  }
  const turn = previousRun.then(() => runInProcess(args, commandEnv(databaseUrl, env), timeoutMs, input));
  previousRun = turn.catch(() => undefined);
  return turn;
};

async function runInProcess(args: string[], env: NodeJS.ProcessEnv, timeoutMs: number, input: string | undefined): Promise<CliResult> {
  const output = { stdout: '', stderr: '' };
  const io = {
    env,
    stdin: Readable.from(input === undefined ? [] : [input]),
    stdout: { write: (text: string) => (output.stdout += text) },
    stderr: { write: (text: string) => (output.stderr += text) },
  };
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`invoicing ${args.join(' ')} did not finish within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    const code = await Promise.race([runProgram([process.execPath, BIN, ...args], io), timedOut]);
    return { code, ...output };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * For a test file: a running app with one tenant (`mode` as given), and `cli(...args)` running the
 * binary against the app's database. Read `ctx.app` and `ctx.t` inside tests (they are set in beforeAll).
 */
export function useCliApp(mode: 'test' | 'live' = 'test'): { app: TestApp; t: Tenant; cli: (...args: string[]) => Promise<CliResult> } {
  const ctx = {
    cli: (...args: string[]) => runCli(ctx.app.databaseUrl, args, {}, 20_000),
  } as { app: TestApp; t: Tenant; cli: (...args: string[]) => Promise<CliResult> };
  beforeAll(async () => {
    requireBuild();
    ctx.app = await startApp();
    ctx.t = await ctx.app.tenant({ mode });
  });
  afterAll(() => ctx.app?.stop());
  return ctx;
}
