/**
 * The newcomer's path, timed: clones this repository into a temporary directory and runs the
 * README's "First webhook in four commands" there, with a local handler this script starts, until
 * a signed `invoice.created` arrives at it. Prints each command with its seconds, and the total.
 *   npm run build && node dist/bench/first-run.js [--port 3999]
 * `npm install` uses this machine's npm cache; the native SQLite module is built from source when
 * no prebuilt binary can be fetched, which is most of the time on a machine without GitHub access
 * (bin/sqlite-binding.js). The machine's load average, printed at the start and the end, says how
 * much other work shared its cores.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { numberOption } from './support';

const PORT = numberOption('port', 3999);
const repository = path.resolve(__dirname, '../..');
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const load = () => `load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} on ${os.availableParallelism()} cores`;

interface Received {
  raw: Buffer;
  headers: http.IncomingHttpHeaders;
}

/** The developer's webhook handler: keeps what arrives. */
async function handler(): Promise<{ url: string; received: Received[]; close: () => void }> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ raw: Buffer.concat(chunks), headers: req.headers });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://localhost:${(server.address() as AddressInfo).port}/webhooks`, received, close: () => server.close() };
}

/** Runs `command` in `cwd` to its end; rejects on a non-zero exit. */
function run(command: string, cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', command], { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}: ${stderr.slice(-2000)}`))));
  });
}

/** Starts `command` in `cwd` and resolves with the process once a line of its output matches `ready`. */
function start(command: string, cwd: string, env: NodeJS.ProcessEnv, ready: RegExp): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  return new Promise((resolve, reject) => {
    // Its own process group: `npm start` runs the server as a grandchild, which a signal to npm alone would leave running.
    const child = spawn('sh', ['-c', `exec ${command}`], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    const look = (chunk: Buffer) => {
      output += chunk.toString();
      const match = output.match(ready);
      if (match) resolve({ child, match });
    };
    child.stdout.on('data', look);
    child.stderr.on('data', look);
    child.on('exit', (code) => reject(new Error(`${command} exited with ${code}: ${output.slice(-2000)}`)));
  });
}

async function main(): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'first-run-'));
  const clone = path.join(root, 'partner-invoicing');
  const hook = await handler();
  // A shell as a newcomer has it: no DATABASE_URL or other setting of this machine's, only the port.
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(PORT) };
  const running: ChildProcess[] = [];
  const steps: [string, number][] = [];
  const started = Date.now();
  const step = async <T>(command: string, work: () => Promise<T>): Promise<T> => {
    const at = Date.now();
    const result = await work();
    steps.push([command, Date.now() - at]);
    process.stdout.write(`${seconds(Date.now() - at).padStart(8)}  ${command}\n`);
    return result;
  };
  try {
    process.stdout.write(`First webhook from a fresh clone (PORT=${PORT}; the handler at ${hook.url}; ${load()})\n`);
    await step(`git clone ${repository}`, () => run(`git clone -q ${repository} ${clone}`, root, env));
    const afterClone = Date.now();
    await step('npm install', () => run('npm install', clone, env));
    const server = await step('npm start  (until it listens)', () => start('npm start', clone, env, /listening on/));
    running.push(server.child);
    const listener = await step(`./bin/invoicing webhooks listen --forward-to ${hook.url}  (until Ready)`, () =>
      start(`./bin/invoicing webhooks listen --forward-to ${hook.url}`, clone, env, /signing secret is (whsec_[A-Za-z0-9_-]+)/),
    );
    running.push(listener.child);
    const secret = listener.match[1];
    await step('./bin/invoicing trigger invoice.created  (until the handler has it)', async () => {
      await run('./bin/invoicing trigger invoice.created', clone, env);
      for (const deadline = Date.now() + 30_000; !hook.received.length; ) {
        if (Date.now() > deadline) throw new Error('no webhook arrived within 30 s of the trigger');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    });
    const [first] = hook.received;
    const signed = first.headers['x-service-signature'] === createHmac('sha256', secret).update(first.raw).digest('hex');
    const type = (JSON.parse(first.raw.toString()) as { type: string }).type;
    process.stdout.write(
      `\nFirst forwarded webhook: ${type}, signature ${signed ? 'valid' : 'INVALID'} with the printed secret\n` +
        `4 commands after the clone: ${seconds(Date.now() - afterClone)} (with the clone: ${seconds(Date.now() - started)}; npm install alone ${seconds(steps[1][1])}; ${load()})\n`,
    );
    if (!signed) process.exitCode = 1;
  } finally {
    for (const child of running.reverse()) if (child.pid) process.kill(-child.pid, 'SIGTERM');
    hook.close();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
