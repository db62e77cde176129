/** E-mail addresses that stress the normalised (lower-cased) copy the database keeps. */

/**
 * A valid 152-character address made of İ (U+0130), whose lower-case form is nearly twice as long:
 * İ lower-cases to i̇ (i and a combining dot). `tld` lets a test vary the case of the last label.
 */
export function dottedCapitalIEmail(tld: string): string {
  const I = 'İ';
  // The address library allows 64 UTF-8 bytes before the @ and 28 İ per domain label.
  return `${I.repeat(32)}@${Array(4).fill(I.repeat(28)).join('.')}.${tld}`;
}
