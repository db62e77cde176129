/**
 * What a received e-invoice says, read from its XML: UBL 2.1 `Invoice` (Peppol BIS Billing 3.0,
 * XRechnung UBL) or UN/CEFACT CII D16B `CrossIndustryInvoice` (EN 16931, Factur-X, ZUGFeRD,
 * XRechnung CII). Elements are matched by namespace and local name, never by prefix. The values are
 * the document's text, checked and converted by ./import.ts; a credit note or another kind of
 * document is refused here.
 */
import { pickFromXml, Pick, Picked, qname, XmlRefused } from './xml-picks';

/** The business terms of EN 16931 an expense is made from, as the document wrote them. */
export interface ReceivedInvoice {
  syntax: 'UBL' | 'CII';
  /** BT-1 */
  number: string | null;
  /** BT-3: an invoice's code (see INVOICE_TYPE_CODES); null when the document has none. */
  typeCode: string | null;
  /** BT-2: `YYYY-MM-DD` in UBL; in CII `YYYYMMDD` with `issueDateFormat` 102. */
  issueDate: string | null;
  issueDateFormat: string | null;
  /** BT-5 */
  currency: string | null;
  /** BT-27 */
  sellerName: string | null;
  /** BT-31: the seller's VAT identifier. */
  sellerVatId: string | null;
  /** BT-110 in the document's currency. */
  taxTotal: string | null;
  /** BT-112 */
  totalWithTax: string | null;
  /** BT-112's currencyID, when it has one. */
  totalWithTaxCurrency: string | null;
  /** BT-114 */
  roundingAmount: string | null;
  /** BT-114's currencyID, when it has one. */
  roundingCurrency: string | null;
  /** BT-153 of the first line. */
  firstLineName: string | null;
  lineCount: number;
}

/** Refused as a kind of document that is not imported (a credit note, another XML document), not as a malformed one. */
export class NotAnInvoice extends XmlRefused {}

const UBL_INVOICE = 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2';
const UBL_CREDIT_NOTE = 'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2';
const CBC = 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2';
const CAC = 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2';
const RSM = 'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100';
const RAM = 'urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100';
const UDT = 'urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100';

const cbc = (local: string) => qname(CBC, local);
const cac = (local: string) => qname(CAC, local);
const rsm = (local: string) => qname(RSM, local);
const ram = (local: string) => qname(RAM, local);
const udt = (local: string) => qname(UDT, local);

/**
 * BT-3, a UNTDID 1001 code, as EN 16931's rule BR-CL-01 lists them: UBL's InvoiceTypeCode takes the
 * first list and UBL's CreditNoteTypeCode the second; CII's TypeCode takes either.
 */
const BR_CL_01_INVOICE_CODES = '71 80 81 82 84 102 130 202 203 204 211 218 219 295 325 326 331 380 382 383 384 385 386 387 388 389 390 393 394 395 456 457 471 472 473 500 501 527 553 575 623 633 751 780 817 870 875 876 877 935';
const BR_CL_01_CREDIT_NOTE_CODES = '81 83 261 262 296 308 381 396 420 458 502 503 532';

/**
 * Refused as credit notes (money owed to the buyer, not an expense): every code of the credit notes'
 * list. 81, a credit note related to goods or services, is also in UBL's invoice list, but is a
 * credit note all the same; the others are 83 (related to financial adjustments), 261 (self-billed),
 * 262 (consolidated), 296 (for price variation), 308 (delcredere), 381, 396 (factored), 420 (OCR
 * payment), 458 (reversal of credit), 502 (self-billed factored), 503 (for a prepayment invoice)
 * and 532 (forwarder's).
 */
const CREDIT_NOTE_TYPE_CODES = new Set(BR_CL_01_CREDIT_NOTE_CODES.split(' '));

/** Refused as documents of the invoice list that are no claim for payment, by what UNTDID 1001 says each is. */
const NOT_INVOICES = new Map([
  // The invoices it reminds of are the expenses.
  ['71', 'a request for payment of invoices past due'],
  ['130', 'an invoicing data sheet (data about invoices)'],
  // Sent before the sale or for customs: the invoice comes later.
  ['325', 'a proforma invoice'],
  ['553', "a forwarder's invoice discrepancy report"],
  // The goods' value stated for the importing country's consulate or customs: the commercial invoice is the expense.
  ['870', 'a consular invoice'],
  ['935', 'a customs invoice'],
]);

/** The codes imported: the rest of the invoice list, each a claim for payment (commercial, corrected, partial, prepayment, self-billed, factored, construction…). */
const INVOICE_TYPE_CODES = new Set(BR_CL_01_INVOICE_CODES.split(' ').filter((code) => !CREDIT_NOTE_TYPE_CODES.has(code) && !NOT_INVOICES.has(code)));

const UBL_PICKS: Record<string, Pick> = {
  document: { path: [], fields: { number: [cbc('ID')], typeCode: [cbc('InvoiceTypeCode')], issueDate: [cbc('IssueDate')], currency: [cbc('DocumentCurrencyCode')] }, keep: 1 },
  seller: { path: [cac('AccountingSupplierParty'), cac('Party')], fields: { name: [cac('PartyLegalEntity'), cbc('RegistrationName')] }, keep: 1 },
  sellerTaxSchemes: { path: [cac('AccountingSupplierParty'), cac('Party'), cac('PartyTaxScheme')], fields: { id: [cbc('CompanyID')], scheme: [cac('TaxScheme'), cbc('ID')] }, keep: 10 },
  taxTotals: { path: [cac('TaxTotal')], fields: { amount: [cbc('TaxAmount')] }, keep: 10 },
  totals: { path: [cac('LegalMonetaryTotal')], fields: { withTax: [cbc('TaxInclusiveAmount')], rounding: [cbc('PayableRoundingAmount')] }, keep: 1 },
  lines: { path: [cac('InvoiceLine')], fields: { name: [cac('Item'), cbc('Name')] }, keep: 1 },
};

const TRANSACTION = rsm('SupplyChainTradeTransaction');
const AGREEMENT = [TRANSACTION, ram('ApplicableHeaderTradeAgreement')];
const SETTLEMENT = [TRANSACTION, ram('ApplicableHeaderTradeSettlement')];
const SUMMATION = [...SETTLEMENT, ram('SpecifiedTradeSettlementHeaderMonetarySummation')];

const CII_PICKS: Record<string, Pick> = {
  document: { path: [rsm('ExchangedDocument')], fields: { number: [ram('ID')], typeCode: [ram('TypeCode')], issueDate: [ram('IssueDateTime'), udt('DateTimeString')] }, keep: 1 },
  seller: { path: [...AGREEMENT, ram('SellerTradeParty')], fields: { name: [ram('Name')] }, keep: 1 },
  sellerTaxRegistrations: { path: [...AGREEMENT, ram('SellerTradeParty'), ram('SpecifiedTaxRegistration')], fields: { id: [ram('ID')] }, keep: 10 },
  settlement: { path: SETTLEMENT, fields: { currency: [ram('InvoiceCurrencyCode')] }, keep: 1 },
  totals: { path: SUMMATION, fields: { withTax: [ram('GrandTotalAmount')], rounding: [ram('RoundingAmount')] }, keep: 1 },
  taxTotals: { path: [...SUMMATION, ram('TaxTotalAmount')], fields: { amount: [] }, keep: 10 },
  lines: { path: [TRANSACTION, ram('IncludedSupplyChainTradeLineItem')], fields: { name: [ram('SpecifiedTradeProduct'), ram('Name')] }, keep: 1 },
};

/** An element's text, trimmed; null when absent or blank. */
const textOf = (picked: Picked | undefined): string | null => {
  const text = picked?.text.trim();
  return text ? text : null;
};

/** An amount's currencyID, trimmed; null when it has none. */
const currencyIdOf = (picked: Picked | undefined): string | null => picked?.attributes.currencyID?.trim() || null;

/** The tax total in the document's currency (BT-110; a second one in the accounting currency is BT-111). */
function taxTotalIn(currency: string | null, amounts: (Picked | undefined)[]): string | null {
  const present = amounts.filter((amount): amount is Picked => textOf(amount) !== null);
  const inCurrency = present.find((amount) => currency !== null && amount.attributes.currencyID?.trim().toUpperCase() === currency.toUpperCase());
  if (inCurrency) return textOf(inCurrency);
  const withoutCurrency = present.filter((amount) => !amount.attributes.currencyID);
  return withoutCurrency.length === 1 ? textOf(withoutCurrency[0]) : null;
}

/** A missing BT-3 is left to ./import.ts, which names what is missing. */
function refuseUnlessInvoice(typeCode: string | null, syntax: 'UBL' | 'CII'): void {
  if (typeCode === null || INVOICE_TYPE_CODES.has(typeCode)) return;
  if (CREDIT_NOTE_TYPE_CODES.has(typeCode)) {
    throw new NotAnInvoice(`The document is a credit note (${syntax} type code ${typeCode}, BT-3): only invoices are imported as expenses`);
  }
  const what = NOT_INVOICES.get(typeCode);
  if (what) throw new NotAnInvoice(`The document is ${what} (${syntax} type code ${typeCode}, BT-3), not an invoice: only invoices are imported as expenses`);
  throw new NotAnInvoice(`The document's type code ${typeCode} (BT-3) is not an invoice's: only invoices are imported as expenses`);
}

/**
 * The terms of a UBL or CII invoice; throws NotAnInvoice for a credit note or another document,
 * and XmlRefused for one that is not well-formed, has a DOCTYPE or is not UTF-8.
 */
export function readReceivedInvoice(bytes: Uint8Array): ReceivedInvoice {
  const picked = pickFromXml(bytes, (root) => {
    if (root.uri === UBL_INVOICE && root.local === 'Invoice') return UBL_PICKS;
    if (root.uri === RSM && root.local === 'CrossIndustryInvoice') return CII_PICKS;
    return undefined;
  });
  const { root, records, counts } = picked;
  const first = (pick: string) => records[pick]?.[0] ?? {};

  const ubl = root.uri === UBL_INVOICE && root.local === 'Invoice';
  if (ubl || (root.uri === RSM && root.local === 'CrossIndustryInvoice')) {
    const syntax = ubl ? 'UBL' : 'CII';
    const document = first('document');
    const typeCode = textOf(document.typeCode);
    refuseUnlessInvoice(typeCode, syntax);
    const currency = textOf(ubl ? document.currency : first('settlement').currency);
    // UBL: the seller's tax scheme VAT (BT-31). CII: schemeID VA is the VAT identifier (BT-31), FC the tax registration (BT-32).
    const vat = ubl
      ? records.sellerTaxSchemes.find((scheme) => textOf(scheme.scheme)?.toUpperCase() === 'VAT')
      : records.sellerTaxRegistrations.find((registration) => registration.id?.attributes.schemeID?.trim().toUpperCase() === 'VA');
    return {
      syntax,
      number: textOf(document.number),
      typeCode,
      issueDate: textOf(document.issueDate),
      issueDateFormat: ubl ? null : (document.issueDate?.attributes.format?.trim() ?? null),
      currency,
      sellerName: textOf(first('seller').name),
      sellerVatId: textOf(vat?.id),
      taxTotal: taxTotalIn(currency, records.taxTotals.map((total) => total.amount)),
      totalWithTax: textOf(first('totals').withTax),
      totalWithTaxCurrency: currencyIdOf(first('totals').withTax),
      roundingAmount: textOf(first('totals').rounding),
      roundingCurrency: currencyIdOf(first('totals').rounding),
      firstLineName: textOf(first('lines').name),
      lineCount: counts.lines,
    };
  }
  if (root.uri === UBL_CREDIT_NOTE && root.local === 'CreditNote') {
    throw new NotAnInvoice('The document is a UBL CreditNote: only invoices are imported as expenses');
  }
  const named = root.uri ? `{${root.uri}}${root.local}` : root.local;
  throw new NotAnInvoice(`The document is XML but not an e-invoice: its root element is ${named}, where a UBL Invoice (${UBL_INVOICE}) or a CII CrossIndustryInvoice (${RSM}) was expected`);
}
