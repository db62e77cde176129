/**
 * What an invoice lacks for an e-invoice: each missing or unusable field by its path, with the rule
 * it breaks. For a draft the paths say where to fix it (`business.tax_id`, `client.country`,
 * `items[0].tax_rate_ids`); for an issued invoice they name its snapshot (`seller.tax_id`,
 * `buyer.country`), which only a credit note and a new invoice can correct. Nothing is generated
 * that fails these rules.
 */
import Big from 'big.js';
import { isCountry } from '../businesses/countries';
import { currencyExponent } from '../money/currencies';
import { toMinor } from '../money/amount';
import { EinvoiceSource, vatBreakdownOf } from './document';
import { CEN_EAS_CODES, PEPPOL_EAS_CODES } from './eas';
import { peppolIdProblem } from './participant-id';
import type { EinvoiceFormat } from './schema';

type Problems = Record<string, string[]>;

/**
 * Sellers' countries whose Peppol national rules (NL-R, DK-R, NO-R, SE-R, GR-R, IS-R, IT-R) ask for
 * identifiers or fields the API does not keep yet. Peppol takes the seller's country from its VAT
 * identifier's prefix (EL for Greece), else from its address.
 */
const PEPPOL_NATIONAL_RULES = ['NL', 'DK', 'NO', 'SE', 'GR', 'EL', 'IS', 'IT'];

/** VAT identifier prefixes BR-CO-09 accepts beside ISO 3166-1 codes: Greece's EL, Northern Ireland's XI, and 1A. */
const OTHER_VAT_PREFIXES = ['EL', 'XI', '1A'];

/** Where a field is fixed: the snapshot's path for an issued invoice, the record's for a draft. */
function pathsFor(draft: boolean) {
  return {
    seller: (field: string) => (draft ? `business.${field}` : `seller.${field}`),
    buyer: (field: string) => (draft ? `client.${field}` : `buyer.${field}`),
  };
}

/** VAT categories whose invoices name the seller's VAT identifier (BR-S-02, BR-Z-02, BR-E-02, BR-AE-02, BR-IC-02, BR-G-02). */
const SELLER_VAT_ID: Record<string, string> = { S: 'BR-S-02', Z: 'BR-Z-02', E: 'BR-E-02', AE: 'BR-AE-02', K: 'BR-IC-02', G: 'BR-G-02' };

export function einvoiceProblems(invoice: EinvoiceSource, format: EinvoiceFormat): Problems {
  const problems: Problems = {};
  const add = (path: string, message: string) => (problems[path] ??= []).push(message);
  const { seller, buyer } = invoice;
  const paths = pathsFor(invoice.draft);

  if (!seller.legal_name) add(paths.seller('legal_name'), 'BR-06: an invoice names the seller');
  if (!seller.country) add(paths.seller('country'), 'BR-09: the seller\'s address has a country code');
  if (!buyer.company && !buyer.name) add(paths.buyer('name'), 'BR-07: an invoice names the buyer');
  if (!buyer.country) add(paths.buyer('country'), 'BR-11: the buyer\'s address has a country code');
  if (!seller.tax_id && !seller.registration_number) add(paths.seller('tax_id'), 'BR-CO-26: the seller is identified by a VAT identifier or a legal registration number');
  for (const [who, party] of [['seller', seller], ['buyer', buyer]] as const) {
    const prefix = party.tax_id?.slice(0, 2) ?? '';
    if (party.tax_id && !(isCountry(prefix) || OTHER_VAT_PREFIXES.includes(prefix))) {
      add(paths[who]('tax_id'), 'BR-CO-09: a VAT identifier starts with its country code (ISO 3166-1; EL for Greece, XI for Northern Ireland)');
    }
    // A Peppol ID is only checked for its shape when it is stored: its scheme must also be one the rules know.
    const [scheme, ...id] = party.peppol_id?.split(':') ?? [];
    if (scheme && !CEN_EAS_CODES.has(scheme)) add(paths[who]('peppol_id'), `BR-CL-25: the electronic address scheme ${scheme} is not on the CEF EAS code list`);
    else if (scheme && format === 'ubl') {
      // Peppol also checks some schemes' identifiers for their check digits.
      const problem = PEPPOL_EAS_CODES.has(scheme) ? peppolIdProblem(scheme, id.join(':')) : `PEPPOL-EN16931-CL008: Peppol does not accept the electronic address scheme ${scheme} yet`;
      if (problem) add(paths[who]('peppol_id'), problem);
    }
  }

  const categories = new Set(invoice.tax_breakdown.map((rate) => rate.category));
  const sellerRule = [...categories].map((category) => SELLER_VAT_ID[category]).find(Boolean);
  if (sellerRule && !seller.tax_id) add(paths.seller('tax_id'), `${sellerRule}: an invoice with VAT category ${[...categories].join(', ')} names the seller's VAT identifier`);
  if (categories.has('AE') && !buyer.tax_id) add(paths.buyer('tax_id'), 'BR-AE-03: a reverse-charge invoice names the buyer\'s VAT identifier');
  if (categories.has('K') && !buyer.tax_id) add(paths.buyer('tax_id'), 'BR-IC-03: an intra-community supply names the buyer\'s VAT identifier');
  if (categories.has('O') && categories.size > 1) add('items', 'BR-O-11: an invoice with a line not subject to VAT (O) has no other VAT category');
  if (categories.has('O') && seller.tax_id) add(paths.seller('tax_id'), 'BR-O-02: an invoice not subject to VAT names no seller VAT identifier');
  if (categories.has('O') && buyer.tax_id) add(paths.buyer('tax_id'), 'BR-O-02: an invoice not subject to VAT names no buyer VAT identifier');
  // EN 16931 wants the delivery date and place of an intra-community supply, which invoices do not carry yet.
  if (categories.has('K')) add('items', 'BR-IC-11: an intra-community supply (category K) names its actual delivery date or invoicing period, which the API\'s invoices do not carry yet');
  const exponent = currencyExponent(invoice.currency) ?? 2;
  for (const entry of vatBreakdownOf(invoice)) {
    // BR-CO-17: each category's VAT is its taxable amount × rate, within one currency unit (a shop's own line taxes may stray further).
    const expected = new Big(entry.taxable).times(entry.percentage).div(100);
    if (new Big(entry.tax).minus(expected).abs().gte(10 ** exponent)) {
      add('tax_breakdown', `BR-CO-17: the VAT of category ${entry.category} at ${entry.percentage} % is not its taxable amount × the rate within one ${invoice.currency} unit`);
    }
  }

  invoice.items.forEach((item, index) => {
    if (!item.description) add(`items[${index}].description`, 'BR-25: each line names its item (a description of characters XML can carry)');
    if (item.tax_rate_ids.length !== 1) {
      add(`items[${index}].tax_rate_ids`, `BR-CO-04: each line has exactly one VAT category (this one has ${item.tax_rate_ids.length} rates)`);
    }
  });

  // EN 16931 amounts have at most two decimals: a three- or four-decimal currency's amounts must end in zeros.
  if (exponent > 2) {
    const amounts = [
      invoice.total, invoice.total_excluding_tax, invoice.total_tax, invoice.amount_paid, invoice.rounding_amount,
      ...invoice.items.map((item) => item.amount_excluding_tax),
      ...invoice.tax_breakdown.flatMap((rate) => [rate.taxable_amount, rate.tax_amount]),
    ];
    if (amounts.some((amount) => toMinor(amount, invoice.currency) % 10 ** (exponent - 2) !== 0)) {
      add('currency', `BR-DEC-09, BR-DEC-12, BR-DEC-23 and the other BR-DEC rules: EN 16931 amounts have at most two decimals; these ${invoice.currency} amounts have ${exponent}`);
    }
  }

  if (format === 'ubl') {
    const peppolCountry = seller.tax_id?.slice(0, 2) ?? seller.country;
    if (peppolCountry && PEPPOL_NATIONAL_RULES.includes(peppolCountry)) {
      add(paths.seller(seller.tax_id ? 'tax_id' : 'country'), `Peppol's national rules for sellers in ${peppolCountry} need identifiers or fields the API does not keep yet: use cii`);
    }
    // Peppol's rules for an invoice between two German parties are XRechnung's (DE-R-*).
    if (seller.country === 'DE' && buyer.country === 'DE') germanRules(invoice, paths, add, (n) => `DE-R-${String(n).padStart(3, '0')}`, 'a Peppol invoice between German parties');
    if (!invoice.buyer_reference && !invoice.purchase_order) add('buyer_reference', 'PEPPOL-EN16931-R003: a Peppol invoice has a buyer reference or a purchase order reference');
    // Peppol's electronic addresses are participant IDs of its EAS list (PEPPOL-EN16931-CL008): an e-mail address is not one.
    if (!seller.peppol_id) add(paths.seller('peppol_id'), 'PEPPOL-EN16931-R020: a Peppol invoice has the seller\'s electronic address, its Peppol ID');
    if (!buyer.peppol_id) add(paths.buyer('peppol_id'), 'PEPPOL-EN16931-R010: a Peppol invoice has the buyer\'s electronic address, its Peppol ID');
  }
  if (format === 'xrechnung-ubl' || format === 'xrechnung-cii') {
    germanRules(invoice, paths, add, (n) => `BR-DE-${n}`, 'an XRechnung');
    // XRechnung 3.0 asks for both electronic addresses; an e-mail address (scheme EM) is one.
    if (!buyer.peppol_id && !buyer.email) add(paths.buyer('email'), 'PEPPOL-EN16931-R010: an XRechnung has the buyer\'s electronic address: a Peppol ID or an e-mail address');
  }
  return problems;
}

/**
 * Germany's rules, as KoSIT's XRechnung has them (BR-DE-n) and Peppol for German parties (DE-R-00n),
 * numbered alike: how to reach the seller, where both parties are, how to pay, and the buyer's
 * routing reference. The seller's contact point (BR-DE-5) is its name, always written.
 */
function germanRules(invoice: EinvoiceSource, paths: ReturnType<typeof pathsFor>, add: (path: string, message: string) => void, rule: (n: number) => string, document: string): void {
  const { seller, buyer } = invoice;
  if (!invoice.buyer_reference) add('buyer_reference', `${rule(15)}: ${document} names the buyer reference (BT-10), e.g. the Leitweg-ID`);
  if (!seller.city) add(paths.seller('city'), `${rule(3)}: ${document} names the seller's city`);
  if (!seller.postal_code) add(paths.seller('postal_code'), `${rule(4)}: ${document} names the seller's post code`);
  if (!seller.phone) add(paths.seller('phone'), `${rule(6)}: ${document} names the seller contact's telephone number`);
  if (!seller.email) add(paths.seller('email'), `${rule(7)}: ${document} names the seller contact's e-mail address`);
  if (!buyer.city) add(paths.buyer('city'), `${rule(8)}: ${document} names the buyer's city`);
  if (!buyer.postal_code) add(paths.buyer('postal_code'), `${rule(9)}: ${document} names the buyer's post code`);
  if (!seller.iban) add(paths.seller('iban'), `${rule(1)}: ${document} gives payment instructions: the seller's IBAN for a credit transfer`);
}
