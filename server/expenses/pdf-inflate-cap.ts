/**
 * A cap on what pdf-lib unpacks while one PDF is read. Parsing a PDF, pdf-lib unpacks every
 * compressed object stream and cross-reference stream in full, into ArrayBuffers: memory outside
 * the V8 heap, which the reading thread's heap limit does not count. A 300 KB object stream can
 * unpack to 300 MB (and pdf-lib doubles its buffer as it grows: 600 MB of memory), so only the time
 * limit stopped it. While a read runs under the cap (`underInflateCap`), two patches of pdf-lib
 * (1.17; node_modules/pdf-lib/cjs/core/streams/) count everything it unpacks:
 *
 * - `decodePDFRawStream`, which every parser of pdf-lib calls, unpacks a stream whose filters are
 *   all FlateDecode with zlib, whose `maxOutputLength` stops at what is left of the cap (zlib is
 *   also many times faster than pdf-lib's inflate in JavaScript). pdf-lib ignores FlateDecode's
 *   DecodeParms, and so does this;
 * - every other decoder (LZW, run-length, ASCII85, hex, a Flate stream zlib finds damaged, which
 *   pdf-lib's inflate reads as far as it can) grows its output in `DecodeStream.ensureBuffer`, which
 *   counts each new buffer against the cap before it is allocated.
 *
 * Past the cap, unpacking throws. pdf-lib's parser skips an object whose parsing throws and goes
 * on, so the cap remembers it was passed and the read is refused afterwards, whatever pdf-lib made
 * of it. Outside a read the patches do what pdf-lib does. They are installed on the first read, on
 * the reading threads only (./document-worker.ts), each of which reads one document at a time.
 */
import { constants, inflateSync } from 'node:zlib';
import { PDFArray, PDFName, PDFRawStream } from 'pdf-lib';
import type { StreamType } from 'pdf-lib/cjs/core/streams/Stream';

/** What pdf-lib may unpack of one PDF, in all: no e-invoice PDF (at most 10 MB) comes near it. */
export const MAX_INFLATED_BYTES = 64 * 1024 * 1024;

/** The PDF unpacks to more than the cap. */
export class InflateCapExceeded extends Error {
  constructor() {
    super(`more than ${MAX_INFLATED_BYTES / 1024 / 1024} MB unpacked`);
  }
}

interface Budget {
  left: number;
  exceeded: boolean;
}

/** The read under way on this thread, if any. */
let budget: Budget | undefined;

/** Counts `bytes` about to be unpacked; throws once the read's cap is passed. */
function spend(bytes: number): void {
  if (!budget) return;
  if (bytes > budget.left) {
    budget.exceeded = true;
    budget.left = 0;
    throw new InflateCapExceeded();
  }
  budget.left -= bytes;
}

const FLATE = PDFName.of('FlateDecode');

/** The stream unpacked by zlib when its filters are all FlateDecode; undefined for pdf-lib's decoders to do. */
function inflatedByZlib(raw: PDFRawStream, left: () => number): Uint8Array | undefined {
  const filter = raw.dict.lookup(PDFName.of('Filter'));
  const filters = filter instanceof PDFArray ? filter.asArray().map((_, i) => filter.lookup(i)) : [filter];
  if (filters.length === 0 || !filters.every((each) => each === FLATE)) return undefined;
  let bytes: Uint8Array = raw.contents;
  for (let i = 0; i < filters.length; i += 1) {
    try {
      // Z_SYNC_FLUSH: a stream cut short gives what it holds, as pdf-lib's inflate does.
      bytes = inflateSync(bytes, { maxOutputLength: Math.max(1, left()), finishFlush: constants.Z_SYNC_FLUSH });
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') spend(Infinity);
      // Damaged (a bad checksum, no zlib header): pdf-lib's inflate reads what it can, its buffers counted.
      return undefined;
    }
    spend(bytes.length);
  }
  return bytes;
}

interface DecodeStreamInternals {
  buffer: Uint8Array;
  minBufferLength: number;
}

let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  /* eslint-disable @typescript-eslint/no-require-imports -- the modules' own export objects, to patch what pdf-lib's parsers call */
  const decodeModule = require('pdf-lib/cjs/core/streams/decode') as { decodePDFRawStream: (raw: PDFRawStream) => StreamType };
  const { default: DecodeStream } = require('pdf-lib/cjs/core/streams/DecodeStream') as { default: { prototype: object } };
  const { default: Stream } = require('pdf-lib/cjs/core/streams/Stream') as { default: new (bytes: Uint8Array) => StreamType };
  /* eslint-enable @typescript-eslint/no-require-imports */

  const pdfLibDecode = decodeModule.decodePDFRawStream;
  decodeModule.decodePDFRawStream = (raw) => {
    const inflated = budget ? inflatedByZlib(raw, () => budget?.left ?? 0) : undefined;
    return inflated ? new Stream(inflated) : pdfLibDecode(raw);
  };

  const prototype = DecodeStream.prototype as { ensureBuffer: (this: DecodeStreamInternals, requested: number) => Uint8Array };
  const ensureBuffer = prototype.ensureBuffer;
  prototype.ensureBuffer = function ensureBufferWithinCap(this: DecodeStreamInternals, requested: number): Uint8Array {
    const current = this.buffer.byteLength;
    if (budget && requested > current) {
      // The buffer pdf-lib is about to allocate: the first power of two from its minimum that holds `requested`.
      let size = this.minBufferLength;
      while (size < requested) size *= 2;
      spend(size - current);
    }
    return ensureBuffer.call(this, requested);
  };
}

/**
 * Runs `read` with at most MAX_INFLATED_BYTES unpacked by pdf-lib; throws InflateCapExceeded past it,
 * also when pdf-lib caught the error and went on. One read at a time per thread.
 */
export async function underInflateCap<T>(read: () => Promise<T> | T): Promise<T> {
  install();
  const own: Budget = { left: MAX_INFLATED_BYTES, exceeded: false };
  budget = own;
  try {
    const result = await read();
    if (own.exceeded) throw new InflateCapExceeded();
    return result;
  } catch (err) {
    if (own.exceeded) throw new InflateCapExceeded();
    throw err;
  } finally {
    budget = undefined;
  }
}
