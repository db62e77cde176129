/**
 * A worker thread's task (./document-reader.ts): a received document's bytes to the terms of the
 * invoice it holds, or the reason it is refused, as plain data (errors do not cross threads).
 */
import type { MessagePort } from 'node:worker_threads';
import { embeddedEinvoice, PdfRefused } from './pdf-attachment';
import { withoutControlCharacters } from './received-document';
import { NotAnInvoice, readReceivedInvoice, ReceivedInvoice } from './received-invoice';
import { XmlRefused } from './xml-picks';

export interface ReadTask {
  mediaType: 'application/xml' | 'application/pdf';
  bytes: Uint8Array;
  /** The largest XML read, embedded in a PDF included. */
  maxXmlBytes: number;
  /** Told when the read begins: its time limit runs from then, not from when it was queued. */
  started: MessagePort;
}

export type ReadOutcome =
  | { kind: 'invoice'; invoice: ReceivedInvoice }
  /** `invalid`: not readable (malformed, hostile, no e-invoice in the PDF); `unsupported`: readable, but not an invoice. */
  | { kind: 'refused'; reason: 'invalid' | 'unsupported'; message: string };

/** The message may quote the document (a PDF's attachment names): without its control characters. */
function refusal(err: unknown): ReadOutcome {
  if (err instanceof NotAnInvoice) return { kind: 'refused', reason: 'unsupported', message: withoutControlCharacters(err.message) };
  if (err instanceof XmlRefused || err instanceof PdfRefused) return { kind: 'refused', reason: 'invalid', message: withoutControlCharacters(err.message) };
  throw err;
}

// pdf-lib reports each malformed object it skips on the console: a received file's faults are not the
// server's to log, and the outcome says what matters. This thread runs nothing else.
console.warn = () => undefined;

export default async function readDocument({ mediaType, bytes, maxXmlBytes, started }: ReadTask): Promise<ReadOutcome> {
  started.postMessage('started');
  started.close();
  try {
    if (mediaType === 'application/xml') return { kind: 'invoice', invoice: readReceivedInvoice(bytes) };
    const { name, xml } = await embeddedEinvoice(bytes, maxXmlBytes);
    try {
      return { kind: 'invoice', invoice: readReceivedInvoice(xml) };
    } catch (err) {
      // Which part of the document was refused: the PDF's attachment, not the PDF.
      if (err instanceof XmlRefused) err.message = `${name}: ${err.message}`;
      throw err;
    }
  } catch (err) {
    return refusal(err);
  }
}
