/**
 * Text as XML 1.0 can carry it. A note, a name or a line may hold characters XML 1.0 cannot carry
 * (control characters pasted from elsewhere, a lone surrogate); an e-invoice or a PDF's XMP leaves
 * them out rather than write a document no parser reads.
 */
const NOT_IN_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

export function xmlCharactersOf(text: string): string {
  return text.replace(NOT_IN_XML, '');
}
