/**
 * UBL 2.1 `Invoice` or `CreditNote` per Peppol BIS Billing 3.0 (EN 16931), from the document in
 * EN 16931's terms; XRechnung's UBL is the same document under its own customization.
 */
import { create } from 'xmlbuilder2';
import { EnInvoice, isNonZero, Party, PEPPOL_BILLING_PROCESS } from './document';

const NAMESPACES = {
  '@xmlns:cac': 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2',
  '@xmlns:cbc': 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2',
};

export const PEPPOL_CUSTOMIZATION = 'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0';

type Node = Record<string, unknown>;

const vat = { 'cbc:ID': 'VAT' };

function amount(currency: string, value: string): Node {
  return { '@currencyID': currency, '#': value };
}

function party(p: Party): Node {
  return {
    ...(p.endpoint ? { 'cbc:EndpointID': { '@schemeID': p.endpoint.scheme, '#': p.endpoint.id } } : {}),
    'cac:PartyName': { 'cbc:Name': p.name },
    'cac:PostalAddress': {
      ...(p.street ? { 'cbc:StreetName': p.street } : {}),
      ...(p.additionalStreet ? { 'cbc:AdditionalStreetName': p.additionalStreet } : {}),
      ...(p.city ? { 'cbc:CityName': p.city } : {}),
      ...(p.postalCode ? { 'cbc:PostalZone': p.postalCode } : {}),
      ...(p.region ? { 'cbc:CountrySubentity': p.region } : {}),
      'cac:Country': { 'cbc:IdentificationCode': p.country },
    },
    ...(p.vatId ? { 'cac:PartyTaxScheme': { 'cbc:CompanyID': p.vatId, 'cac:TaxScheme': vat } } : {}),
    'cac:PartyLegalEntity': { 'cbc:RegistrationName': p.name, ...(p.registration ? { 'cbc:CompanyID': p.registration } : {}) },
    ...(p.email || p.phone ? { 'cac:Contact': { ...(p.contactName ? { 'cbc:Name': p.contactName } : {}), ...(p.phone ? { 'cbc:Telephone': p.phone } : {}), ...(p.email ? { 'cbc:ElectronicMail': p.email } : {}) } } : {}),
  };
}

export function toUbl(doc: EnInvoice, customization = PEPPOL_CUSTOMIZATION): string {
  const { currency } = doc;
  // A credit note is its own document type: no due date of its own (BT-9 would sit in its payment means), credited quantities.
  const creditNote = doc.typeCode === '381';
  const root = creditNote ? 'CreditNote' : 'Invoice';
  const invoice: Node = {
    '@xmlns': `urn:oasis:names:specification:ubl:schema:xsd:${root}-2`,
    ...NAMESPACES,
    'cbc:CustomizationID': customization,
    'cbc:ProfileID': PEPPOL_BILLING_PROCESS,
    'cbc:ID': doc.number,
    'cbc:IssueDate': doc.issueDate,
    ...(doc.dueDate && !creditNote ? { 'cbc:DueDate': doc.dueDate } : {}),
    [`cbc:${root}TypeCode`]: doc.typeCode,
    ...(doc.note ? { 'cbc:Note': doc.note } : {}),
    'cbc:DocumentCurrencyCode': currency,
    ...(doc.buyerReference ? { 'cbc:BuyerReference': doc.buyerReference } : {}),
    ...(doc.orderReference ? { 'cac:OrderReference': { 'cbc:ID': doc.orderReference } } : {}),
    ...(doc.corrects ? { 'cac:BillingReference': { 'cac:InvoiceDocumentReference': { 'cbc:ID': doc.corrects.number, 'cbc:IssueDate': doc.corrects.issueDate } } } : {}),
    'cac:AccountingSupplierParty': { 'cac:Party': party(doc.seller) },
    'cac:AccountingCustomerParty': { 'cac:Party': party(doc.buyer) },
    ...(doc.iban
      ? {
          'cac:PaymentMeans': {
            'cbc:PaymentMeansCode': doc.paymentMeansCode,
            'cbc:PaymentID': doc.number,
            'cac:PayeeFinancialAccount': { 'cbc:ID': doc.iban, ...(doc.bic ? { 'cac:FinancialInstitutionBranch': { 'cbc:ID': doc.bic } } : {}) },
          },
        }
      : {}),
    ...(doc.paymentTerms ? { 'cac:PaymentTerms': { 'cbc:Note': doc.paymentTerms } } : {}),
    'cac:TaxTotal': {
      'cbc:TaxAmount': amount(currency, doc.totals.tax),
      'cac:TaxSubtotal': doc.vat.map((entry) => ({
        'cbc:TaxableAmount': amount(currency, entry.taxable),
        'cbc:TaxAmount': amount(currency, entry.tax),
        'cac:TaxCategory': {
          'cbc:ID': entry.category,
          'cbc:Percent': entry.percent,
          ...(entry.exemptionReason ? { 'cbc:TaxExemptionReason': entry.exemptionReason } : {}),
          'cac:TaxScheme': vat,
        },
      })),
    },
    'cac:LegalMonetaryTotal': {
      'cbc:LineExtensionAmount': amount(currency, doc.totals.lines),
      'cbc:TaxExclusiveAmount': amount(currency, doc.totals.excludingTax),
      'cbc:TaxInclusiveAmount': amount(currency, doc.totals.includingTax),
      ...(isNonZero(doc.totals.paid) ? { 'cbc:PrepaidAmount': amount(currency, doc.totals.paid) } : {}),
      ...(isNonZero(doc.totals.rounding) ? { 'cbc:PayableRoundingAmount': amount(currency, doc.totals.rounding) } : {}),
      'cbc:PayableAmount': amount(currency, doc.totals.payable),
    },
    [`cac:${root}Line`]: doc.lines.map((line) => ({
      'cbc:ID': line.id,
      [creditNote ? 'cbc:CreditedQuantity' : 'cbc:InvoicedQuantity']: { '@unitCode': 'C62', '#': line.quantity },
      'cbc:LineExtensionAmount': amount(currency, line.netAmount),
      'cac:Item': {
        'cbc:Name': line.name,
        'cac:ClassifiedTaxCategory': { 'cbc:ID': line.category, ...(line.percent === null ? {} : { 'cbc:Percent': line.percent }), 'cac:TaxScheme': vat },
      },
      'cac:Price': { 'cbc:PriceAmount': amount(currency, line.netPrice) },
    })),
  };
  // Its text is as XML 1.0 can carry it already (document.ts left out what it cannot).
  return create({ version: '1.0', encoding: 'UTF-8' }, { [root]: invoice }).end({ prettyPrint: true });
}
