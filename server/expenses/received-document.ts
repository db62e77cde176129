/**
 * What a received document may be, without loading anything: the CLI checks a file's size before it
 * loads the server, and the e-invoices of einvoice/ embed the attachment under the name read here;
 * and the characters its text loses.
 */

/** The largest document imported (once any Content-Encoding is undone), and the largest XML read out of a PDF. */
export const MAX_DOCUMENT_BYTES = 10 * 1024 * 1024;

/** The name Factur-X and ZUGFeRD 2 give the XML embedded in the PDF. */
export const FACTURX_ATTACHMENT_NAME = 'factur-x.xml';

/** The names of a PDF's embedded e-invoice (any case), in the order they are looked for. */
export const EINVOICE_ATTACHMENT_NAMES = [FACTURX_ATTACHMENT_NAME, 'zugferd-invoice.xml', 'xrechnung.xml'] as const;

/**
 * C0 and C1 control characters and DEL (Unicode's Cc), but tab, line feed and carriage return, and
 * the bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069). XML 1.0
 * carries C1 (U+0080–U+009F, CSI among them) and DEL, a PDF's strings anything: a terminal showing
 * an expense, or a refusal quoting the document, would obey them, or show a vendor's name reversed.
 */
const CONTROL_CHARACTERS = /(?![\t\n\r])\p{Cc}|[\u202A-\u202E\u2066-\u2069]/gu;

/** A received document's text without its control characters (tab and line breaks kept). */
export function withoutControlCharacters(text: string): string {
  return text.replace(CONTROL_CHARACTERS, '');
}
