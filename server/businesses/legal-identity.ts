/**
 * The checks of a party's legal identity, written once for the business (the seller) and its
 * clients (the buyers): country, tax ID, IBAN, BIC and Peppol participant ID, as joi fields that
 * normalise what they accept. Pure.
 */
import Joi from 'joi';
import { isCountry } from './countries';

/** ISO 3166-1 alpha-2, validated against the ISO list; input is case-insensitive. */
export const countryField = Joi.string()
  .trim()
  .uppercase()
  .custom((value: string, helpers) => (isCountry(value) ? value : helpers.error('any.invalid')))
  .messages({ 'any.invalid': '{{#label}} must be an ISO 3166-1 alpha-2 code such as US' })
  .description('ISO 3166-1 alpha-2 country code (input is case-insensitive)');

/**
 * IBAN lengths by country, as the SWIFT IBAN registry (ISO 13616) gives them. The French overseas
 * departments and territories have their own codes with France's format; Kosovo (XK) has IBANs.
 */
const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AX: 18, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BI: 27, BL: 27, BR: 29, BY: 28,
  CH: 21, CR: 22, CY: 28, CZ: 24, DE: 22, DJ: 27, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18, FK: 18, FO: 18,
  FR: 27, GB: 22, GE: 22, GF: 27, GI: 23, GL: 18, GP: 27, GR: 27, GT: 28, HN: 28, HR: 21, HU: 28, IE: 22, IL: 23,
  IQ: 23, IS: 26, IT: 27, JO: 30, KW: 30, KZ: 20, LB: 28, LC: 32, LI: 21, LT: 20, LU: 20, LV: 21, LY: 25, MC: 27,
  MD: 24, ME: 22, MF: 27, MK: 19, MN: 20, MQ: 27, MR: 27, MT: 31, MU: 30, NC: 27, NI: 28, NL: 18, NO: 15, OM: 23,
  PF: 27, PK: 24, PL: 28, PM: 27, PS: 29, PT: 25, QA: 29, RE: 27, RO: 24, RS: 22, RU: 33, SA: 24, SC: 31, SD: 18,
  SE: 24, SI: 19, SK: 24, SM: 27, SO: 23, ST: 25, SV: 28, TF: 27, TL: 23, TN: 24, TR: 26, UA: 29, VA: 22, VG: 24,
  WF: 27, XK: 20, YE: 30, YT: 27,
};

/** An IBAN as it is stored and printed electronically: no spaces, upper case. */
export function compactIban(value: string): string {
  return value.replace(/\s+/g, '').toUpperCase();
}

/**
 * ISO 13616's check: the first four characters moved to the end, letters as numbers (A = 10 … Z = 35),
 * the whole number mod 97 is 1. Computed piecewise, as the number has up to 70 digits.
 */
export function ibanChecksumHolds(iban: string): boolean {
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const digits = char >= 'A' && char <= 'Z' ? String(char.charCodeAt(0) - 55) : char;
    for (const digit of digits) remainder = (remainder * 10 + Number(digit)) % 97;
  }
  return remainder === 1;
}

/** Why `iban` (compacted) is not an IBAN, as a joi error code; undefined when it is one. */
function ibanProblem(iban: string): { code: string; local?: Record<string, unknown> } | undefined {
  if (!/^[A-Z]{2}[0-9]{2}[A-Z0-9]+$/.test(iban)) return { code: 'iban.shape' };
  const country = iban.slice(0, 2);
  const length = IBAN_LENGTHS[country];
  if (length === undefined) return { code: 'iban.country', local: { country } };
  if (iban.length !== length) return { code: 'iban.length', local: { country, length, actual: iban.length } };
  if (!ibanChecksumHolds(iban)) return { code: 'iban.checksum' };
  return undefined;
}

/** An IBAN, spaces allowed on input; stored without them, in upper case. */
export const ibanField = Joi.string()
  .trim()
  .max(50)
  .custom((value: string, helpers) => {
    const iban = compactIban(value);
    const problem = ibanProblem(iban);
    return problem ? helpers.error(problem.code, problem.local) : iban;
  })
  .messages({
    'iban.shape': '{{#label}} must be an IBAN: a country code, two check digits and the account, such as DE89 3704 0044 0532 0130 00',
    'iban.country': '{{#label}} must be an IBAN: {{#country}} is not a country of the IBAN registry',
    'iban.length': '{{#label}} must be an IBAN: one of {{#country}} has {{#length}} characters, not {{#actual}}',
    'iban.checksum': '{{#label}} is not a valid IBAN: its check digits do not match (ISO 13616 mod 97); look for a mistyped character',
  })
  .description('IBAN (ISO 13616), checked by its country\'s length and its mod-97 check digits; spaces are accepted and dropped, letters upper-cased');

/** A BIC (ISO 9362): bank code, country code, location code, optional branch code: 8 or 11 characters. */
export const bicField = Joi.string()
  .trim()
  .custom((value: string, helpers) => {
    const bic = value.replace(/\s+/g, '').toUpperCase();
    if (!/^[A-Z0-9]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/.test(bic)) return helpers.error('bic.shape');
    const country = bic.slice(4, 6);
    return isCountry(country) || country === 'XK' ? bic : helpers.error('bic.country', { country });
  })
  .messages({
    'bic.shape': '{{#label}} must be a BIC of 8 or 11 characters: bank code, country code, location code and an optional branch code, such as DEUTDEFF or DEUTDEFF500',
    'bic.country': '{{#label}} must be a BIC: its country code {{#country}} is not an ISO 3166-1 country',
  })
  .description('BIC (ISO 9362), 8 or 11 characters; stored in upper case');

/**
 * The VAT number shapes of the EU member states (and Northern Ireland's XI), after the prefix, as the
 * European Commission's VIES publishes them. Greece's prefix is EL, not GR.
 */
const VAT_SHAPES: Readonly<Record<string, { pattern: RegExp; says: string }>> = {
  AT: { pattern: /^U[0-9]{8}$/, says: 'U and 8 digits' },
  BE: { pattern: /^[01][0-9]{9}$/, says: '10 digits starting with 0 or 1' },
  BG: { pattern: /^[0-9]{9,10}$/, says: '9 or 10 digits' },
  CY: { pattern: /^[0-9]{8}[A-Z]$/, says: '8 digits and a letter' },
  CZ: { pattern: /^[0-9]{8,10}$/, says: '8 to 10 digits' },
  DE: { pattern: /^[0-9]{9}$/, says: '9 digits' },
  DK: { pattern: /^[0-9]{8}$/, says: '8 digits' },
  EE: { pattern: /^[0-9]{9}$/, says: '9 digits' },
  EL: { pattern: /^[0-9]{9}$/, says: '9 digits' },
  ES: { pattern: /^[A-Z0-9][0-9]{7}[A-Z0-9]$/, says: '9 characters: a letter or digit, 7 digits, a letter or digit' },
  FI: { pattern: /^[0-9]{8}$/, says: '8 digits' },
  FR: { pattern: /^[A-Z0-9]{2}[0-9]{9}$/, says: '2 letters or digits and 9 digits' },
  HR: { pattern: /^[0-9]{11}$/, says: '11 digits' },
  HU: { pattern: /^[0-9]{8}$/, says: '8 digits' },
  IE: { pattern: /^([0-9]{7}[A-W][A-I]?|[0-9][A-Z*+][0-9]{5}[A-W])$/, says: '7 digits and one or two letters' },
  IT: { pattern: /^[0-9]{11}$/, says: '11 digits' },
  LT: { pattern: /^([0-9]{9}|[0-9]{12})$/, says: '9 or 12 digits' },
  LU: { pattern: /^[0-9]{8}$/, says: '8 digits' },
  LV: { pattern: /^[0-9]{11}$/, says: '11 digits' },
  MT: { pattern: /^[0-9]{8}$/, says: '8 digits' },
  NL: { pattern: /^[0-9]{9}B[0-9]{2}$/, says: '9 digits, B and 2 digits' },
  PL: { pattern: /^[0-9]{10}$/, says: '10 digits' },
  PT: { pattern: /^[0-9]{9}$/, says: '9 digits' },
  RO: { pattern: /^[1-9][0-9]{1,9}$/, says: '2 to 10 digits' },
  SE: { pattern: /^[0-9]{10}01$/, says: '12 digits ending in 01' },
  SI: { pattern: /^[0-9]{8}$/, says: '8 digits' },
  SK: { pattern: /^[0-9]{10}$/, says: '10 digits' },
  XI: { pattern: /^([0-9]{9}|[0-9]{12}|GD[0-9]{3}|HA[0-9]{3})$/, says: '9 or 12 digits, or GD or HA and 3 digits' },
};

/** Where a VAT number may start with a letter after its prefix: Austria's U, Spain's and France's letters, XI's GD and HA. */
const LETTER_AFTER_PREFIX = new Set(['AT', 'ES', 'FR', 'XI']);

/**
 * The EU VAT prefix `taxId` (compacted) is written with, if it is read as an EU VAT number: one of
 * the prefixes followed by a digit, or by a letter where that country's numbers may start with one.
 * So a Mexican RFC such as `DEL800101AB1` (no German VAT number starts `DEL`) stays as written.
 */
function euVatPrefix(compact: string): string | undefined {
  const prefix = compact.slice(0, 2);
  if (!(prefix in VAT_SHAPES)) return undefined;
  const next = compact.charAt(2);
  return /[0-9]/.test(next) || (/[A-Z]/.test(next) && LETTER_AFTER_PREFIX.has(prefix)) ? prefix : undefined;
}

/**
 * A tax ID as written (trimmed, up to 50 characters): a US EIN, a UK UTR, any VAT number. One that
 * starts with an EU VAT prefix is an EU VAT number: it is checked for that country's shape and
 * stored compact (upper case, without spaces, dots or hyphens), as e-invoices carry it.
 */
export const taxIdField = Joi.string()
  .trim()
  .max(50)
  .custom((value: string, helpers) => {
    const compact = value.replace(/[\s.-]+/g, '').toUpperCase();
    const prefix = euVatPrefix(compact);
    if (prefix === undefined) return value;
    const shape = VAT_SHAPES[prefix];
    return shape.pattern.test(compact.slice(2)) ? compact : helpers.error('taxId.vat', { prefix, shape: shape.says });
  })
  .messages({ 'taxId.vat': '{{#label}} is not a valid {{#prefix}} VAT number: {{#prefix}} must be followed by {{#shape}}' })
  .description(
    'A VAT or other tax number, as written (e.g. DE123456789, or a US EIN 12-3456789). One starting with an EU VAT prefix (AT BE BG CY CZ DE DK EE EL ES FI FR HR HU IE IT LT LU LV MT NL PL PT RO SE SI SK, and XI) is checked for that country\'s shape and stored without spaces, dots or hyphens',
  );

/** A Peppol participant ID `SCHEME:ID`: a 4-digit ISO 6523 scheme (ICD/EAS), a colon, the identifier. */
export const PEPPOL_ID_PATTERN = '^[0-9]{4}:[^\\s:]{1,135}$';

export const peppolIdField = Joi.string()
  .trim()
  .max(140)
  .pattern(new RegExp(PEPPOL_ID_PATTERN))
  .messages({ 'string.pattern.base': '{{#label}} must be a Peppol participant ID SCHEME:ID, a 4-digit scheme, a colon and the identifier, such as 0088:7300010000001 or 9930:DE123456789' })
  .description('Peppol participant ID SCHEME:ID: a 4-digit scheme (ICD/EAS code), a colon and the identifier, e.g. 0088:7300010000001');
