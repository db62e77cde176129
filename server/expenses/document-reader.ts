/**
 * Received documents are read on worker threads (Piscina), each read bounded in time and in memory:
 * a crafted PDF can take pdf-lib a long time, and a 10 MB document must not stall every other
 * request of the process while it is parsed. A read past its time, or past its thread's heap, ends
 * that thread (Piscina replaces it) and is refused as a document that cannot be read. The heap limit
 * does not count Buffers and ArrayBuffers: what a PDF unpacks is capped apart (./pdf-inflate-cap.ts).
 * No thread starts before the first document, and an idle one leaves after a minute.
 */
import path from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { ReceivedInvoice } from './received-invoice';
import type { ReadOutcome, ReadTask } from './document-worker';
import { DocumentReadersBusy, InvalidDocument, UnsupportedDocument } from './schema';

export interface DocumentReaderOptions {
  threads: number;
  /** How long one document may take to read. */
  timeoutMs: number;
  /** The largest XML read, an attachment unpacked from a PDF included. */
  maxXmlBytes: number;
}

/** Documents waiting for a thread, per thread, before more are refused (503). */
const QUEUED_PER_THREAD = 16;
const IDLE_MS = 60_000;
/** A thread's heap: a read needs a few MB; pdf-lib's objects of a 10 MB PDF fit well within it. */
const HEAP_MB = 256;

export class DocumentReader {
  private pool?: Piscina<ReadTask, ReadOutcome>;

  constructor(private readonly options: DocumentReaderOptions) {}

  /** The invoice's terms; InvalidDocument, UnsupportedDocument or DocumentReadersBusy otherwise. */
  async read(mediaType: ReadTask['mediaType'], bytes: Buffer): Promise<ReceivedInvoice> {
    const pool = this.start();
    if (pool.queueSize >= this.options.threads * QUEUED_PER_THREAD) throw new DocumentReadersBusy();
    let outcome: ReadOutcome;
    // The time limit runs from when a thread begins the read: waiting in the queue, or for a new thread to load, is not the document's doing.
    const { port1: started, port2: startedPort } = new MessageChannel();
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    started.once('message', () => {
      timer = setTimeout(() => abort.abort(), this.options.timeoutMs).unref();
    });
    try {
      // A copy of its own, moved to the thread: the request keeps its body (the Idempotency-Key's fingerprint read it).
      const copy = new Uint8Array(bytes);
      // Piscina types its transferList after MessagePort.postMessage's last overload, an options object in newer @types/node: the list is what it sends.
      const transferList = [copy.buffer, startedPort] as unknown as NonNullable<Parameters<Piscina['run']>[1]>['transferList'];
      outcome = await pool.run({ mediaType, bytes: copy, maxXmlBytes: this.options.maxXmlBytes, started: startedPort }, { signal: abort.signal, transferList });
    } catch (err) {
      throw this.failure(err);
    } finally {
      clearTimeout(timer);
      started.close();
    }
    if (outcome.kind === 'refused') throw outcome.reason === 'unsupported' ? new UnsupportedDocument(outcome.message) : new InvalidDocument(outcome.message);
    return outcome.invoice;
  }

  /** Ends the threads; a read after this starts new ones. */
  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    await pool?.destroy();
  }

  /** A read that ran out of time or memory is the document's doing: refused. Anything else is ours. */
  private failure(err: unknown): unknown {
    const e = err as { name?: string; code?: string; message?: string };
    if (e?.name === 'AbortError') {
      return new InvalidDocument(`The document could not be read within ${this.options.timeoutMs / 1000} seconds: it is malformed or built to be slow to read`);
    }
    if (e?.code === 'ERR_WORKER_OUT_OF_MEMORY') return new InvalidDocument('The document needs more memory to read than any e-invoice does: it is malformed or built to exhaust memory');
    if (typeof e?.message === 'string' && /task queue is at limit/i.test(e.message)) return new DocumentReadersBusy();
    return err;
  }

  private start(): Piscina<ReadTask, ReadOutcome> {
    if (!this.pool) {
      const filename = require.resolve(path.join(__dirname, 'document-worker'));
      this.pool = new Piscina({
        filename,
        minThreads: 0,
        maxThreads: this.options.threads,
        idleTimeout: IDLE_MS,
        maxQueue: this.options.threads * QUEUED_PER_THREAD,
        resourceLimits: { maxOldGenerationSizeMb: HEAP_MB },
        // Run from the TypeScript sources (the tests), a thread compiles them as it loads them; compiled, it keeps the process's flags.
        execArgv: filename.endsWith('.ts') ? ['--require', require.resolve('tsx/cjs')] : undefined,
      });
    }
    return this.pool;
  }
}
