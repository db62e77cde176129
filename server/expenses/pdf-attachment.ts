/**
 * The e-invoice a PDF carries (Factur-X, ZUGFeRD 2, XRechnung in a PDF): its embedded file named
 * `factur-x.xml`, `zugferd-invoice.xml` or `xrechnung.xml` (any case), found in the catalog's
 * EmbeddedFiles name tree or its associated files (/AF, PDF/A-3). pdf-lib parses the PDF under a cap
 * on what it unpacks (./pdf-inflate-cap.ts: a small compressed stream can unpack to gigabytes); the
 * attachment is unpacked here with zlib and a cap on its size. Run on a worker thread with a time
 * limit (./document-reader.ts): pdf-lib parses every object of the file, which a crafted file can
 * make slow.
 */
import { inflateSync } from 'node:zlib';
import { decodePDFRawStream, PDFArray, PDFContext, PDFDict, PDFHexString, PDFName, PDFObject, PDFParser, PDFRawStream, PDFRef, PDFString } from 'pdf-lib';
import { InflateCapExceeded, MAX_INFLATED_BYTES, underInflateCap } from './pdf-inflate-cap';
import { EINVOICE_ATTACHMENT_NAMES } from './received-document';

/** Why a PDF's e-invoice is not read: the message is for the person who sent it. */
export class PdfRefused extends Error {}

/** How deep a name tree may nest, and how many entries it may have, before the rest is ignored. */
const MAX_TREE_DEPTH = 32;
const MAX_TREE_ENTRIES = 10_000;

const name = (value: string) => PDFName.of(value);

function resolved(context: PDFContext, object: PDFObject | undefined): PDFObject | undefined {
  return object instanceof PDFRef ? context.lookup(object) : object;
}

function dictAt(context: PDFContext, dict: PDFDict | undefined, key: string): PDFDict | undefined {
  const value = resolved(context, dict?.get(name(key)));
  return value instanceof PDFDict ? value : undefined;
}

function arrayAt(context: PDFContext, dict: PDFDict | undefined, key: string): PDFArray | undefined {
  const value = resolved(context, dict?.get(name(key)));
  return value instanceof PDFArray ? value : undefined;
}

function textOf(value: PDFObject | undefined): string | undefined {
  return value instanceof PDFString || value instanceof PDFHexString ? value.decodeText() : undefined;
}

/** The file specifications of a name tree's leaves, depth first, bounded in depth and entries, each node once. */
function nameTreeValues(context: PDFContext, root: PDFDict | undefined): PDFObject[] {
  const values: PDFObject[] = [];
  const seen = new Set<PDFDict>();
  const visit = (node: PDFDict | undefined, depth: number) => {
    if (!node || depth > MAX_TREE_DEPTH || seen.has(node) || values.length >= MAX_TREE_ENTRIES) return;
    seen.add(node);
    const names = arrayAt(context, node, 'Names');
    for (let i = 1; names && i < names.size() && values.length < MAX_TREE_ENTRIES; i += 2) values.push(names.get(i));
    const kids = arrayAt(context, node, 'Kids');
    for (let i = 0; kids && i < kids.size(); i += 1) {
      const kid = resolved(context, kids.get(i));
      if (kid instanceof PDFDict) visit(kid, depth + 1);
    }
  };
  visit(root, 0);
  return values;
}

/** A file specification's name: its Unicode name (/UF), else its file name (/F). */
function fileNameOf(context: PDFContext, spec: PDFDict): string | undefined {
  return textOf(resolved(context, spec.get(name('UF')))) ?? textOf(resolved(context, spec.get(name('F'))));
}

/** The stream's bytes, unpacked: at most `maxBytes`, else refused. */
async function unpacked(stream: PDFRawStream, maxBytes: number, fileName: string): Promise<Uint8Array> {
  const filter = stream.dict.lookup(name('Filter'));
  const filters = filter instanceof PDFArray ? filter.asArray() : filter === undefined ? [] : [filter];
  const tooLarge = () => new PdfRefused(`The PDF's ${fileName} is larger than ${maxBytes / 1024 / 1024} MB unpacked`);
  let bytes: Uint8Array;
  if (filters.length === 0) {
    bytes = stream.contents;
  } else if (filters.length === 1 && filters[0] === name('FlateDecode')) {
    try {
      // Z_SYNC_FLUSH: a stream cut short still gives what it holds, as PDF readers do. DecodeParms is
      // ignored, as pdf-lib ignores it for FlateDecode: a predictor's output is no XML anyway.
      bytes = inflateSync(stream.contents, { maxOutputLength: maxBytes, finishFlush: 2 /* zlib.constants.Z_SYNC_FLUSH */ });
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge();
      throw new PdfRefused(`The PDF's ${fileName} could not be unpacked: its compressed data is damaged`);
    }
  } else {
    // Other filters (rare for an attachment), and chains of them, through pdf-lib's decoders under the cap.
    try {
      bytes = await underInflateCap(() => decodePDFRawStream(stream).decode());
    } catch (err) {
      if (err instanceof InflateCapExceeded) throw new PdfRefused(`The PDF's ${fileName} unpacks to more than ${MAX_INFLATED_BYTES / 1024 / 1024} MB: it is malformed or built to exhaust memory`);
      throw err;
    }
  }
  if (bytes.length > maxBytes) throw tooLarge();
  return bytes;
}

/** The attachment's name and bytes; refused (PdfRefused) when the PDF cannot be read or carries none. */
export async function embeddedEinvoice(pdf: Uint8Array, maxBytes: number): Promise<{ name: string; xml: Uint8Array }> {
  if (!Buffer.from(pdf.subarray(0, 1024)).includes('%PDF-')) throw new PdfRefused('The document is not a PDF: it has no %PDF- header');
  let context: PDFContext;
  try {
    // Every object parsed in one go (no yielding: this runs on its own thread); invalid objects are skipped, as readers do.
    context = await underInflateCap(() => PDFParser.forBytesWithOptions(pdf, Infinity, false).parseDocument());
  } catch (err) {
    if (err instanceof InflateCapExceeded) throw new PdfRefused(`The PDF unpacks to more than ${MAX_INFLATED_BYTES / 1024 / 1024} MB: it is malformed or built to exhaust memory`);
    throw new PdfRefused('The PDF is malformed: it could not be read');
  }
  try {
    if (context.trailerInfo.Encrypt) throw new PdfRefused('The PDF is encrypted: a Factur-X or ZUGFeRD PDF (PDF/A-3) never is');
    const catalog = resolved(context, context.trailerInfo.Root);
    if (!(catalog instanceof PDFDict)) throw new PdfRefused('The PDF is malformed: it has no document catalog');
    const specs = [
      ...nameTreeValues(context, dictAt(context, dictAt(context, catalog, 'Names'), 'EmbeddedFiles')),
      ...(arrayAt(context, catalog, 'AF')?.asArray() ?? []),
    ].flatMap((spec) => {
      const dict = resolved(context, spec);
      const fileName = dict instanceof PDFDict ? fileNameOf(context, dict) : undefined;
      return dict instanceof PDFDict && fileName ? [{ dict, fileName }] : [];
    });
    for (const wanted of EINVOICE_ATTACHMENT_NAMES) {
      const spec = specs.find(({ fileName }) => fileName.trim().toLowerCase() === wanted);
      if (!spec) continue;
      const files = dictAt(context, spec.dict, 'EF');
      const stream = resolved(context, files?.get(name('F'))) ?? resolved(context, files?.get(name('UF')));
      if (!(stream instanceof PDFRawStream)) throw new PdfRefused(`The PDF names an attachment ${spec.fileName} but carries no file for it`);
      return { name: spec.fileName, xml: await unpacked(stream, maxBytes, spec.fileName) };
    }
    const found = specs.map(({ fileName }) => fileName).slice(0, 5);
    throw new PdfRefused(
      `The PDF carries no e-invoice: no attachment named ${EINVOICE_ATTACHMENT_NAMES.join(', ')}${found.length ? ` (it has ${found.join(', ')})` : ' (it has no attachment)'}`,
    );
  } catch (err) {
    if (err instanceof PdfRefused) throw err;
    // pdf-lib's lookups throw on objects of an unexpected type: the file is malformed.
    throw new PdfRefused('The PDF is malformed: its attachments could not be read');
  }
}
