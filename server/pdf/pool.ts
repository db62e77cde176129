/**
 * PDFs are made on worker threads (Piscina): an invoice of 500 long lines takes half a second of
 * CPU, which on the event loop would stall every request and job of the process meanwhile. No thread
 * starts before the first PDF, and a thread idle for a minute leaves (each holds the parsed fonts).
 * Requests are refused with PdfBusy (503) past a bound; background jobs wait their turn.
 */
import { Piscina } from 'piscina';
import { PdfBusy } from '../errors';

export interface PdfFile {
  filename: string;
  content: Buffer;
}

/** A PDF a public page offers (the payment page's, the signed contract): the file, or try again after a while. */
export type PageDownload = { kind: 'file'; filename: string; content: Buffer } | { kind: 'busy'; retryAfterSeconds: number };

/** The file `making` renders, or `busy` when the threads refuse the request (PdfBusy): the page answers 503 with Retry-After. */
export async function pageDownload(making: Promise<PdfFile>): Promise<PageDownload> {
  try {
    const { filename, content } = await making;
    return { kind: 'file', filename, content };
  } catch (err) {
    if (!(err instanceof PdfBusy)) throw err;
    return { kind: 'busy', retryAfterSeconds: err.retryAfterSeconds };
  }
}

/** What renders documents on threads: a PdfPool, seen by a caller that sends it only some of its tasks. */
export interface DocumentRenderer<Input> {
  render(input: Input, options: { wait: boolean }): Promise<PdfFile>;
  close(): Promise<void>;
}

/** Requests one thread takes on at once: the one it is making and 16 waiting; past that, a request is refused. */
const REQUESTS_PER_THREAD = 17;
const IDLE_MS = 60_000;

export class PdfPool<Input> implements DocumentRenderer<Input> {
  private pool?: Piscina<Input, { filename: string; content: Uint8Array }>;
  /** Requests' PDFs being made or waiting; jobs' PDFs wait without counting here, so a backlog of e-mails does not refuse requests. */
  private requests = 0;

  /** `workerModule`: the module whose default export renders one Input, as a path without its extension. */
  constructor(
    private readonly workerModule: string,
    private readonly threads: number,
  ) {}

  /** The rendered file; a request (`wait: false`) is refused with PdfBusy while the threads have their fill of requests. */
  async render(input: Input, options: { wait: boolean }): Promise<PdfFile> {
    const pool = this.start();
    if (options.wait) return this.run(pool, input);
    if (this.requests >= this.threads * REQUESTS_PER_THREAD) throw new PdfBusy();
    this.requests += 1;
    try {
      return await this.run(pool, input);
    } finally {
      this.requests -= 1;
    }
  }

  /** Ends the threads; a render after this starts new ones. */
  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    await pool?.destroy();
  }

  private async run(pool: Piscina<Input, { filename: string; content: Uint8Array }>, input: Input): Promise<PdfFile> {
    const { filename, content } = await pool.run(input);
    return { filename, content: Buffer.from(content.buffer, content.byteOffset, content.byteLength) };
  }

  private start(): Piscina<Input, { filename: string; content: Uint8Array }> {
    if (!this.pool) {
      const filename = require.resolve(this.workerModule);
      this.pool = new Piscina({
        filename,
        minThreads: 0,
        maxThreads: this.threads,
        idleTimeout: IDLE_MS,
        // First come, first served: by default a task no thread could take at once goes to the back of
        // the queue, and with one thread some downloads waited 9 s while later ones passed (bench:einvoice-http).
        stricterFIFO: true,
        // Run from the TypeScript sources (the tests), a thread compiles them as it loads them; compiled, it keeps the process's flags.
        execArgv: filename.endsWith('.ts') ? ['--require', require.resolve('tsx/cjs')] : undefined,
      });
    }
    return this.pool;
  }
}
