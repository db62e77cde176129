/**
 * How long the `invoicing` program takes to answer, started afresh each time as a person or a script
 * starts it: `--help`, `--version`, a command's own help, and a command that opens the database.
 *   npm run build && node dist/bench/cli-start.js [--runs 20]
 * Prints the median and the slowest run of each, in milliseconds of wall time.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startStopwatch } from '../server/clock';
import { numberOption } from './support';

const RUNS = numberOption('runs', 20);
const BIN = path.resolve(__dirname, '../bin/invoicing.js');

function timed(args: string[], env: NodeJS.ProcessEnv): number {
  const stopwatch = startStopwatch();
  execFileSync(process.execPath, [BIN, ...args], { env, stdio: 'ignore' });
  return stopwatch.elapsedMs();
}

function main(): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'invoicing-cli-bench-'));
  const env = { PATH: process.env.PATH, DATABASE_URL: `sqlite:${path.join(dir, 'bench.sqlite3')}` };
  execFileSync(process.execPath, [BIN, 'migrate'], { env, stdio: 'ignore' });
  const cases = [['--help'], ['--version'], ['keys', 'create', '--help'], ['business', 'list', '--json']];
  console.log(`invoicing, started ${RUNS} times each (median / slowest, ms of wall time)`);
  for (const args of cases) {
    timed(args, env); // warm the file cache
    const times = Array.from({ length: RUNS }, () => timed(args, env)).sort((a, b) => a - b);
    console.log(`${`invoicing ${args.join(' ')}`.padEnd(34)} ${Math.round(times[Math.floor(times.length / 2)])
      .toString()
      .padStart(5)} / ${Math.round(times[times.length - 1])}`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

main();
