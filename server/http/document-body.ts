/**
 * Routes whose body is a document read as its bytes (an e-invoice's XML or PDF), not JSON: which
 * media types a route takes and how large a body may be (server/http/guard.ts reads it), and the
 * body its handler gets. Other routes keep the JSON parser and its limit.
 */
import express, { Request, Response } from 'express';
import { BadRequest, PayloadTooLarge } from '../errors';
import { asStep } from './request';

export type DocumentMediaType = 'application/xml' | 'application/pdf';

/** The body a document route's handler gets: the bytes received, any Content-Encoding undone, and the media type they came as. */
export interface RawDocument {
  mediaType: DocumentMediaType;
  bytes: Buffer;
}

/** A route's document body. `B` types the handler's body (a RawDocument); it is never set. */
export interface DocumentBody<B = RawDocument> {
  types: readonly DocumentMediaType[];
  limitBytes: number;
  description: string;
  readonly body?: B;
}

export function documentBody(types: readonly DocumentMediaType[], limitBytes: number, description: string): DocumentBody<RawDocument> {
  return { types, limitBytes, description };
}

export function isRawDocument(body: unknown): body is RawDocument {
  return typeof body === 'object' && body !== null && Buffer.isBuffer((body as RawDocument).bytes) && typeof (body as RawDocument).mediaType === 'string';
}

/** `10 MB` */
const inMegabytes = (bytes: number) => `${bytes / 1024 / 1024} MB`;

/**
 * The Content-Encodings a body may come in, besides none (`identity`): those body-parser undoes on
 * every Node version we run on (it also takes zstd where Node has it, which is not all of them).
 */
export const CONTENT_ENCODINGS = ['gzip', 'deflate', 'br'] as const;

/** 400 for a body in a Content-Encoding no route undoes: the JSON routes answer it as the document routes do. */
export function unsupportedContentEncoding(encoding: string): BadRequest {
  return new BadRequest(`Content-Encoding ${encoding} is not supported: send the body as it is, or encoded with ${CONTENT_ENCODINGS.join(', ')}`);
}

/**
 * The guard's step that reads a document route's body: its Content-Type must be one of the route's
 * types (else 400), its Content-Encoding none or one of CONTENT_ENCODINGS (else 400), and it may be
 * at most `limitBytes` once that encoding is undone (else 413).
 */
export function documentReader(spec: DocumentBody<unknown>): (req: Request, res: Response) => Promise<void> {
  const parse = express.raw({ type: [...spec.types], limit: spec.limitBytes });
  return async (req, res) => {
    const length = req.get('content-length');
    const hasBody = req.get('transfer-encoding') !== undefined || (length !== undefined && length !== '0');
    if (hasBody && !req.is([...spec.types])) throw new BadRequest(`Content-Type must be ${spec.types.join(' or ')}`);
    const encoding = (req.get('content-encoding') ?? 'identity').trim().toLowerCase();
    if (hasBody && encoding !== 'identity' && !(CONTENT_ENCODINGS as readonly string[]).includes(encoding)) throw unsupportedContentEncoding(encoding);
    try {
      await asStep(parse, req, res);
    } catch (err) {
      const failure = err as { type?: string; encoding?: string };
      if (failure.type === 'entity.too.large') throw new PayloadTooLarge(inMegabytes(spec.limitBytes));
      if (failure.type === 'encoding.unsupported') throw unsupportedContentEncoding(failure.encoding ?? encoding);
      throw err;
    }
  };
}

/** The document a request carried (empty when it had no body; the service refuses that). */
export function rawDocumentOf(req: Request, spec: DocumentBody<unknown>): RawDocument {
  const bytes: unknown = req.body;
  const mediaType = spec.types.find((type) => req.is(type)) ?? spec.types[0];
  return { mediaType, bytes: Buffer.isBuffer(bytes) ? bytes : Buffer.alloc(0) };
}
