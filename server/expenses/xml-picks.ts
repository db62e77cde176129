/**
 * Reads chosen values out of an XML document from outside (a received e-invoice) without building
 * a tree: one pass of saxes, a strict parser that reports every well-formedness error, expands only
 * the five predefined entities and character references, and never reads a file or the network.
 * A DOCTYPE is refused outright (no e-invoice has one; it is where entities would be declared), as
 * are XML versions other than 1.0 (XML 1.1 lets character references write control characters such
 * as ESC), text encodings other than UTF-8, nesting deeper than MAX_DEPTH and elements past
 * MAX_ELEMENTS. Only the values asked for are kept, so memory stays small however long the document;
 * they hold only characters XML 1.0 allows (xmlCharactersOf, should the parser ever let one through).
 */
import { SaxesParser, SaxesTagNS } from 'saxes';
import { xmlCharactersOf } from '../xml-text';

/** Why a document is not read: the message is for the person who sent it. */
export class XmlRefused extends Error {}

/** An element's text (its descendants' text included) and its unqualified attributes. */
export interface Picked {
  text: string;
  attributes: Record<string, string>;
}

/** An element name as `namespace URI|local name`. */
export type QName = string;
export const qname = (uri: string, local: string): QName => `${uri}|${local}`;

/**
 * Records to read: one record per element at `path` (below the root; `[]` is the root itself), each
 * with the first element at each of its `fields`' paths (below the record's element; `[]` is the
 * element itself). Records past `keep` are counted, not read.
 */
export interface Pick {
  path: readonly QName[];
  fields: Record<string, readonly QName[]>;
  keep: number;
}

export interface Picks {
  /** The root element. */
  root: { uri: string; local: string };
  /** The records of each pick, in document order, at most `keep` of them. */
  records: Record<string, Record<string, Picked>[]>;
  /** How many elements each pick matched, kept or not. */
  counts: Record<string, number>;
}

const MAX_DEPTH = 64;
const MAX_ELEMENTS = 2_000_000;
/** A value longer than this is cut here: no field read is anywhere near as long, and the caller checks lengths. */
const MAX_VALUE_CHARS = 10_000;

interface OpenRecord {
  pick: string;
  /** Depth of the record's element. */
  depth: number;
  values: Record<string, Picked>;
}

interface Capture {
  depth: number;
  into: Record<string, Picked>;
  field: string;
  text: string;
}

const samePath = (a: readonly QName[], b: readonly QName[], offset: number) => a.length === b.length + offset && b.every((name, i) => a[offset + i] === name);

/**
 * The records `choose` asks for once it has seen the root element (undefined: none; the document is
 * still read to its end, so that a malformed one is reported as such). Throws XmlRefused.
 */
export function pickFromXml(bytes: Uint8Array, choose: (root: { uri: string; local: string }) => Record<string, Pick> | undefined): Picks {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new XmlRefused('The document is not UTF-8 text (e-invoices are UTF-8 XML)');
  }

  const parser = new SaxesParser({ xmlns: true, position: true });
  let picks: Record<string, Pick> = {};
  let root: { uri: string; local: string } | undefined;
  const records: Record<string, Record<string, Picked>[]> = {};
  const counts: Record<string, number> = {};
  /** The names of the open elements below the root. */
  const path: QName[] = [];
  const open: OpenRecord[] = [];
  const captures: Capture[] = [];
  let elements = 0;

  parser.on('xmldecl', ({ version, encoding }) => {
    if (version !== undefined && version !== '1.0') throw new XmlRefused(`The document declares XML version ${version}: e-invoices are XML 1.0, and only XML 1.0 is read`);
    if (encoding !== undefined && !/^utf-?8$/i.test(encoding)) throw new XmlRefused(`The document declares the encoding ${encoding}: only UTF-8 is read`);
  });
  parser.on('doctype', () => {
    throw new XmlRefused('The document has a DOCTYPE declaration, which is refused: e-invoices have none, and it could declare entities');
  });
  parser.on('opentag', (tag: SaxesTagNS) => {
    elements += 1;
    if (elements > MAX_ELEMENTS) throw new XmlRefused(`The document has more than ${MAX_ELEMENTS} elements`);
    const name = qname(tag.uri, tag.local);
    if (root === undefined) {
      root = { uri: tag.uri, local: tag.local };
      picks = choose(root) ?? {};
      for (const key of Object.keys(picks)) {
        records[key] = [];
        counts[key] = 0;
      }
    } else {
      path.push(name);
      if (path.length > MAX_DEPTH) throw new XmlRefused(`The document nests elements more than ${MAX_DEPTH} deep`);
    }
    const attributes = () => Object.fromEntries(Object.values(tag.attributes).flatMap((a) => (a.uri === '' && a.prefix === '' ? [[a.local, xmlCharactersOf(a.value)]] : [])));
    for (const [key, pick] of Object.entries(picks)) {
      if (!samePath(path, pick.path, 0)) continue;
      counts[key] += 1;
      if (records[key].length < pick.keep) {
        const values: Record<string, Picked> = {};
        records[key].push(values);
        open.push({ pick: key, depth: path.length, values });
      }
    }
    for (const record of open) {
      for (const [field, fieldPath] of Object.entries(picks[record.pick].fields)) {
        if (record.values[field] === undefined && samePath(path, fieldPath, record.depth)) {
          record.values[field] = { text: '', attributes: attributes() };
          captures.push({ depth: path.length, into: record.values, field, text: '' });
        }
      }
    }
  });
  const addText = (chunk: string) => {
    for (const capture of captures) {
      if (capture.text.length < MAX_VALUE_CHARS) capture.text += chunk.slice(0, MAX_VALUE_CHARS - capture.text.length);
    }
  };
  parser.on('text', addText);
  parser.on('cdata', addText);
  parser.on('closetag', () => {
    const depth = path.length;
    while (captures.length && captures[captures.length - 1].depth === depth) {
      const capture = captures.pop()!;
      capture.into[capture.field].text = xmlCharactersOf(capture.text);
    }
    while (open.length && open[open.length - 1].depth === depth) open.pop();
    path.pop();
  });

  try {
    parser.write(text).close();
  } catch (err) {
    if (err instanceof XmlRefused) throw err;
    // saxes: "<line>:<column>: <what>", e.g. "1:14: unexpected close tag."
    throw new XmlRefused(`The document is not well-formed XML: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (root === undefined) throw new XmlRefused('The document is not well-formed XML: it has no root element');
  return { root, records, counts };
}
