/**
 * `invoicing serve` as a process of its own (dist/, so `npm run build` first), for the tests where
 * the process boundary is the point: crashes, several processes on one database.
 */
import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

const BIN = path.resolve(__dirname, '../../dist/bin/invoicing.js');

export interface ServedProcess {
  child: ChildProcess;
  /** The partner API's base URL, e.g. http://127.0.0.1:40123/api/v1/partner. */
  api: string;
}

/** Starts `invoicing serve --port 0` with exactly `env` (plus PATH) and resolves once it listens. */
export async function serveProcess(env: NodeJS.ProcessEnv): Promise<ServedProcess> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], { env: { PATH: process.env.PATH, ...env } });
  const api = await new Promise<string>((resolve, reject) => {
    let printed = '';
    child.stdout.on('data', (d: Buffer) => {
      printed += String(d);
      const banner = /listening on http:\/\/localhost(:\d+\/\S+)/.exec(printed);
      if (banner) resolve(`http://127.0.0.1${banner[1]}`);
    });
    child.once('exit', (code) => reject(new Error(`invoicing serve exited with ${code}`)));
  });
  return { child, api };
}

/** Resolves once the process has exited (at once if it has). */
export function stopped(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
}
