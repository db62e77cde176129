/**
 * PDFs are made on worker threads (Piscina): an invoice of 500 long lines takes half a second of
 * CPU, which on the event loop would stall every request and job of the process meanwhile. No thread
 * starts before the first PDF, and a thread idle for a minute leaves (each holds the parsed fonts).
 * Requests are refused with 503 once too many wait; background jobs wait their turn.
 */
import { Piscina } from 'piscina';
import { ServiceUnavailable } from '../errors';

export interface PdfFile {
  filename: string;
  content: Buffer;
}

/** What a request may leave waiting for a thread, per thread, before it is refused. */
const WAITING_PER_THREAD = 16;
const IDLE_MS = 60_000;

export class PdfPool<Input> {
  private pool?: Piscina<Input, { filename: string; content: Uint8Array }>;

  /** `workerModule`: the module whose default export renders one Input, as a path without its extension. */
  constructor(
    private readonly workerModule: string,
    private readonly threads: number,
  ) {}

  /** The rendered file; a request (`wait: false`) is refused with ServiceUnavailable while the queue is full. */
  async render(input: Input, options: { wait: boolean }): Promise<PdfFile> {
    const pool = this.start();
    if (!options.wait && pool.queueSize >= this.threads * WAITING_PER_THREAD) {
      throw new ServiceUnavailable('Too many PDFs are being made right now: retry in a few seconds');
    }
    const { filename, content } = await pool.run(input);
    return { filename, content: Buffer.from(content.buffer, content.byteOffset, content.byteLength) };
  }

  /** Ends the threads; a render after this starts new ones. */
  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    await pool?.destroy();
  }

  private start(): Piscina<Input, { filename: string; content: Uint8Array }> {
    if (!this.pool) {
      const filename = require.resolve(this.workerModule);
      this.pool = new Piscina({
        filename,
        minThreads: 0,
        maxThreads: this.threads,
        idleTimeout: IDLE_MS,
        // Run from the TypeScript sources (the tests), a thread compiles them as it loads them.
        execArgv: filename.endsWith('.ts') ? ['--require', require.resolve('tsx/cjs')] : [],
      });
    }
    return this.pool;
  }
}
