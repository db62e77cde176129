/**
 * Peppol participant IDs that Peppol BIS Billing 3.0.19 checks beyond their scheme: the
 * PEPPOL-COMMON-R040…R050 asserts on an electronic address (cbc:EndpointID) or a party's
 * identifier of the schemes below, for their format and, for most, a check digit.
 *
 * A Peppol ID is stored for its shape alone (`SCHEME:ID`), but Peppol's rules for these schemes are
 * fatal: a document carrying such an ID with a wrong check digit is invalid, and the access point
 * refuses it. So an invoice is not ready for Peppol while a party's ID breaks one (422
 * einvoice_not_ready), rather than writing a document we know to be invalid.
 *
 * Each test reproduces the compiled Schematron (xslt/PEPPOL-EN16931-UBL.xslt: the functions u:gln,
 * u:mod11, u:mod97-0208, u:checkCodiceIPA, u:checkCF, u:checkCF16, u:checkPIVAseIT, u:checkPIVA,
 * u:addPIVA, u:abn, u:checkSEOrgnr and the asserts that call them) as it is, quirks included, so
 * our verdict is the validator's: most read the value after XPath's normalize-space() (the Danish
 * one reads it raw); lengths and positions count characters (code points), not UTF-16 units; a GLN
 * may have any number of digits (GS1's check digit is all that is checked); a Norwegian number of
 * nine zeros fails (`number($val) > 0`); a Danish CVR number's check digit is not checked; a
 * Partita IVA is only checked after an `IT` or `it` prefix (any other value passes); and a
 * Codice Fiscale's digit fields are `castable as xs:integer` (a sign, or a space beside the digits,
 * passes).
 *
 * The asserts on Italian identifiers (R044…R047) are flagged `warning` in Peppol 3.0.19, so a
 * document that breaks one is still valid: peppolIdProblem answers the fatal rules only, and
 * peppolIdWarning the others. (Except a Partita IVA on which R047 cannot even run: that document is
 * invalid, so peppolIdProblem answers it.)
 */

type Flag = 'fatal' | 'warning';

interface Rule {
  id: string;
  flag: Flag;
  message: string;
  passes: (value: string) => boolean;
  /** A value on which the rule itself fails to run, which makes the document invalid whatever the rule's flag. */
  unreadable?: { message: string; test: (value: string) => boolean };
}

/** XPath's normalize-space(): its whitespace is only space, tab, CR and LF. */
function normalizeSpace(value: string): string {
  return value.replace(/[ \t\r\n]+/g, ' ').replace(/^ | $/g, '');
}

/** XPath's substring($s, start, length) for whole numbers, on code points. */
function substring(chars: readonly string[], start: number, length = Infinity): string {
  const from = Math.max(start, 1);
  const to = start + length;
  return chars.slice(from - 1, Math.max(to - 1, from - 1)).join('');
}

/** `castable as xs:integer`: xs:integer's whitespace facet trims space, tab, CR and LF, then an optional sign and ASCII digits. */
function castableAsInteger(value: string): boolean {
  return /^[ \t\r\n]*[+-]?[0-9]+[ \t\r\n]*$/.test(value);
}

const digitAt = (value: string, index: number): number => value.charCodeAt(index) - 48;

/** u:gln: GS1's check digit (weights 3, 1, 3… from the right of the digits before it), for any length. */
function gln(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length - 1; i++) sum += digitAt(digits, digits.length - 2 - i) * (i % 2 === 0 ? 3 : 1);
  return (10 - (sum % 10)) % 10 === digitAt(digits, digits.length - 1);
}

/** u:mod11 on nine digits: weights 2…7, 2, 3 from the right of the first eight; a remainder of 1 leaves no check digit. */
function mod11(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length - 1; i++) sum += digitAt(digits, digits.length - 2 - i) * ((i % 6) + 2);
  return Number(digits) > 0 && (11 - (sum % 11)) % 11 === digitAt(digits, digits.length - 1);
}

/** u:mod97-0208 on ten digits: the last two are 97 minus the first eight modulo 97 (97 when that is 0). */
function mod97(digits: string): boolean {
  return Number(digits.slice(8, 10)) === 97 - (Number(digits.slice(0, 8)) % 97);
}

/** u:abn on eleven digits: the first less one times 10, then weights 1, 3, 5… 19; the sum is a multiple of 89. */
function abn(digits: string): boolean {
  let sum = (digitAt(digits, 0) - 1) * 10;
  for (let i = 1; i < 11; i++) sum += digitAt(digits, i) * (2 * i - 1);
  return sum % 89 === 0;
}

/** u:checkSEOrgnr on ten digits: Luhn's check digit over the first nine. */
function luhn(digits: string): boolean {
  let sum = 0;
  for (let pos = 1; pos <= 9; pos++) {
    const digit = digitAt(digits, 9 - pos);
    sum += pos % 2 === 1 ? ((digit * 2) % 10) + Math.floor((digit * 2) / 10) : digit;
  }
  return (10 - (sum % 10)) % 10 === digitAt(digits, 9);
}

const isLetters = (value: string) => /^[A-Za-z]*$/.test(value);

/** u:checkCF: 11 characters castable as xs:integer, or 16 shaped as a Codice Fiscale (u:checkCF16). */
function codiceFiscale(value: string): boolean {
  const chars = Array.from(value);
  if (chars.length === 11) return castableAsInteger(value);
  if (chars.length !== 16) return false;
  return isLetters(substring(chars, 1, 6)) && castableAsInteger(substring(chars, 7, 2)) && isLetters(substring(chars, 9, 1))
    && castableAsInteger(substring(chars, 10, 2)) && castableAsInteger(substring(chars, 15, 1)) && isLetters(substring(chars, 16, 1));
}

/** The two characters before a Partita IVA's digits, and its digits (`IT00743110157`: `IT`, `00743110157`), on code points. */
function splitPartitaIva(value: string): { country: string; code: string } {
  const chars = Array.from(value);
  return { country: substring(chars, 1, 2), code: substring(chars, 3) };
}

/**
 * u:checkPIVAseIT: after `IT` or `it`, 11 characters castable as xs:integer whose digits, the
 * second, fourth… mapped by 0246813579 (their doubles' digit sums), add up to a multiple of 10.
 * Anything else passes, `It…` and a number without the prefix too.
 */
function partitaIva(value: string): boolean {
  const { country, code } = splitPartitaIva(value);
  if (country !== 'IT' && country !== 'it') return true;
  if (!/^[0-9]{11}$/.test(code)) return false;
  let sum = 0;
  for (let i = 0; i < 11; i++) sum += i % 2 === 0 ? digitAt(code, i) : Number('0246813579'[digitAt(code, i)]);
  return sum % 10 === 0;
}

/**
 * The Partita IVAs the rule cannot evaluate: 11 characters after `IT` castable as xs:integer but
 * starting with a sign or a space (`IT+1234567890`). u:addPIVA then converts that first character
 * to an integer, a dynamic error (FORG0001) that stops all of Peppol's rules, and the validator
 * counts the document invalid: fatal, not a warning.
 */
function partitaIvaUnreadable(value: string): boolean {
  const { country, code } = splitPartitaIva(value);
  return (country === 'IT' || country === 'it') && Array.from(code).length === 11 && castableAsInteger(code) && !/^[0-9]/.test(code);
}

const RULES: ReadonlyMap<string, Rule> = new Map([
  ['0088', {
    id: 'PEPPOL-COMMON-R040', flag: 'fatal',
    message: 'a GLN (scheme 0088) is digits only, ending in its GS1 check digit',
    passes: (id: string) => { const v = normalizeSpace(id); return /^[0-9]+$/.test(v) && gln(v); },
  }],
  ['0192', {
    id: 'PEPPOL-COMMON-R041', flag: 'fatal',
    message: 'a Norwegian organisation number (scheme 0192) has 9 digits, not all zero, ending in its mod 11 check digit',
    passes: (id: string) => { const v = normalizeSpace(id); return /^[0-9]{9}$/.test(v) && mod11(v); },
  }],
  ['0184', {
    id: 'PEPPOL-COMMON-R042', flag: 'fatal',
    message: 'a Danish CVR number (scheme 0184) is 8 digits, or DK and 8 digits, with no spaces',
    passes: (id: string) => /^(DK)?[0-9]{8}$/.test(id),
  }],
  ['0208', {
    id: 'PEPPOL-COMMON-R043', flag: 'fatal',
    message: 'a Belgian enterprise number (scheme 0208) has 10 digits, the last two its mod 97 check digits',
    passes: (id: string) => { const v = normalizeSpace(id); return /^[0-9]{10}$/.test(v) && mod97(v); },
  }],
  ['0201', {
    id: 'PEPPOL-COMMON-R044', flag: 'warning',
    message: 'an IPA code (scheme 0201) has 6 letters or digits',
    passes: (id: string) => /^[A-Za-z0-9]{6}$/.test(normalizeSpace(id)),
  }],
  ['0210', {
    id: 'PEPPOL-COMMON-R045', flag: 'warning',
    message: 'a Codice Fiscale (scheme 0210) has 11 digits, or 16 characters: 6 letters, 2 digits, a letter, 2 digits, 3 characters, a digit and a letter',
    passes: (id: string) => codiceFiscale(normalizeSpace(id)),
  }],
  // R046 reads an electronic address only; 9907 is not on the EAS code lists, so BR-CL-25 refuses it first.
  ['9907', {
    id: 'PEPPOL-COMMON-R046', flag: 'warning',
    message: 'a Codice Fiscale (scheme 9907) has 11 digits, or 16 characters: 6 letters, 2 digits, a letter, 2 digits, 3 characters, a digit and a letter',
    passes: (id: string) => codiceFiscale(normalizeSpace(id)),
  }],
  ['0211', {
    id: 'PEPPOL-COMMON-R047', flag: 'warning',
    message: 'a Partita IVA (scheme 0211) written with IT has 11 digits after it, ending in its check digit',
    passes: (id: string) => partitaIva(normalizeSpace(id)),
    unreadable: {
      message: 'a Partita IVA (scheme 0211) written with IT has 11 digits after it: a sign or a space there stops Peppol\'s rules from running',
      test: (id: string) => partitaIvaUnreadable(normalizeSpace(id)),
    },
  }],
  ['0007', {
    id: 'PEPPOL-COMMON-R049', flag: 'fatal',
    message: 'a Swedish organisation number (scheme 0007) has 10 digits, ending in its Luhn check digit',
    passes: (id: string) => { const v = normalizeSpace(id); return /^[0-9]{10}$/.test(v) && luhn(v); },
  }],
  ['0151', {
    id: 'PEPPOL-COMMON-R050', flag: 'fatal',
    message: 'an Australian Business Number (scheme 0151) has 11 digits that pass its mod 89 check',
    passes: (id: string) => { const v = normalizeSpace(id); return /^[0-9]{11}$/.test(v) && abn(v); },
  }],
]);

function broken(flag: Flag, scheme: string, id: string): string | null {
  const rule = RULES.get(scheme);
  if (!rule) return null;
  if (rule.unreadable?.test(id)) return flag === 'fatal' ? `${rule.id}: ${rule.unreadable.message}` : null;
  return rule.flag === flag && !rule.passes(id) ? `${rule.id}: ${rule.message}` : null;
}

/**
 * The fatal Peppol rule (PEPPOL-COMMON-R040 GLN, R041 Norway, R042 Denmark, R043 Belgium, R049
 * Sweden, R050 Australia) that `id`, written as an electronic address of scheme `scheme`
 * (`0088` for `0088:7300010000001`), breaks: a message starting with the rule's ID, or null when it
 * passes or its scheme has no such rule. Also an Italian Partita IVA on which R047 cannot run.
 */
export function peppolIdProblem(scheme: string, id: string): string | null {
  return broken('fatal', scheme, id);
}

/**
 * The Peppol warning (PEPPOL-COMMON-R044 IPA code, R045 and R046 Codice Fiscale, R047 Partita IVA)
 * that `id` of scheme `scheme` draws, like peppolIdProblem: the document stays valid.
 */
export function peppolIdWarning(scheme: string, id: string): string | null {
  return broken('warning', scheme, id);
}
