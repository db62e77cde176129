/**
 * Drives the compiled `invoicing` binary on a real pseudo-terminal (util-linux `script`), the way a
 * person answers its prompts: wait for a question to show, then type.
 */
import { execFileSync, spawn, ChildProcessWithoutNullStreams } from 'node:child_process';
import { stripVTControlCharacters } from 'node:util';
import { TEST_APP_SECRET_KEY } from './app';
import { BIN } from './cli';

export const KEYS = { enter: '\r', space: ' ', down: '\x1b[B', up: '\x1b[A', ctrlC: '\x03', ctrlU: '\x15' } as const;

/** Whether `script` is installed; pseudo-terminal tests are skipped without it. */
export const hasScript = (() => {
  try {
    execFileSync('script', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** The screen without colours and cursor movements, for matching text. */
export function plain(screen: string): string {
  return stripVTControlCharacters(screen).replace(/\r/g, '');
}

export class Terminal {
  private output = '';
  /** Where the last answered question ended: the next one is looked for after it. */
  private cursor = 0;
  private readonly exited: Promise<number>;
  private readonly child: ChildProcessWithoutNullStreams;

  /** Starts `invoicing <args>` on a pseudo-terminal against `databaseUrl`; `env` adds variables. */
  constructor(databaseUrl: string, args: string[], env: Record<string, string> = {}) {
    const quote = (a: string) => `'${a.replace(/'/g, "'\\''")}'`;
    const command = [process.execPath, BIN, ...args].map(quote).join(' ');
    // `script -e` exits with the command's exit code.
    this.child = spawn('script', ['-qefc', command, '/dev/null'], {
      env: { PATH: process.env.PATH, TERM: 'xterm-256color', DATABASE_URL: databaseUrl, APP_SECRET_KEY: TEST_APP_SECRET_KEY, ...env },
    });
    this.child.stdout.on('data', (d: Buffer) => (this.output += d.toString('utf8')));
    this.child.stderr.on('data', (d: Buffer) => (this.output += d.toString('utf8')));
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code ?? 1)));
  }

  /** Everything shown so far, as written (colours and cursor movements included). */
  get screen(): string {
    return this.output;
  }

  /** Waits until `pattern` shows on the screen (after `from` characters of it), then returns the screen's length. */
  async waitFor(pattern: RegExp | string, timeoutMs = 10_000, from = 0): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    const found = () => {
      const text = plain(this.output.slice(from));
      return typeof pattern === 'string' ? text.includes(pattern) : pattern.test(text);
    };
    while (!found()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${String(pattern)}; the screen shows:\n${plain(this.output)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return this.output.length;
  }

  /** Waits for `question` (shown after the previous one), then types `keys` (answers end with KEYS.enter). */
  async answer(question: RegExp | string, ...keys: string[]): Promise<void> {
    this.cursor = await this.waitFor(question, 10_000, this.cursor);
    for (const key of keys) {
      this.child.stdin.write(key);
      // Prompts read keypresses one by one; a short gap keeps them from arriving as one paste.
      await new Promise((r) => setTimeout(r, 30));
    }
  }

  /** The process's exit code. */
  async exitCode(timeoutMs = 20_000): Promise<number> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.child.kill('SIGKILL');
        reject(new Error(`did not exit within ${timeoutMs} ms; the screen shows:\n${plain(this.output)}`));
      }, timeoutMs);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
