/** Runs the compiled `invoicing` binary (dist/, built by `npm test`'s pretest) as a child process. */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { startApp, Tenant, TEST_APP_SECRET_KEY, TestApp } from './app';

export const BIN = path.resolve(__dirname, '../../dist/bin/invoicing.js');
const run = promisify(execFile);

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function requireBuild(): void {
  if (!fs.existsSync(BIN)) throw new Error('dist/ is missing: `npm test` builds it first (npm run build)');
}

/**
 * `invoicing <args>` against `databaseUrl`, with the test app's APP_SECRET_KEY so secrets the CLI
 * seals open in the app and the other way round; `env` adds or overrides variables (`undefined`
 * unsets one), `cwd` is the working directory (default: this process's), `input` is written to
 * its standard input (a password for `--password-stdin`).
 */
export async function runCli(
  databaseUrl: string,
  args: string[],
  env: Record<string, string | undefined> = {},
  timeoutMs = 30_000,
  cwd?: string,
  input?: string,
): Promise<CliResult> {
  try {
    const pending = run(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl, APP_SECRET_KEY: TEST_APP_SECRET_KEY, ...env },
      timeout: timeoutMs,
      cwd,
    });
    if (input !== undefined) pending.child.stdin?.end(input);
    const { stdout, stderr } = await pending;
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
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
