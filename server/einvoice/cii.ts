/**
 * UN/CEFACT CII D16B `CrossIndustryInvoice`, EN 16931 profile, from the document in EN 16931's
 * terms: an invoice (380) or a credit note (381, naming the invoice it corrects). Factur-X embeds
 * this document; XRechnung's CII is the same under its own guideline.
 */
import { create } from 'xmlbuilder2';
import { EnInvoice, isNonZero, Party, PEPPOL_BILLING_PROCESS, XRECHNUNG_SPECIFICATION } from './document';

const NAMESPACES = {
  '@xmlns:rsm': 'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100',
  '@xmlns:ram': 'urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100',
  '@xmlns:udt': 'urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100',
  '@xmlns:qdt': 'urn:un:unece:uncefact:data:standard:QualifiedDataType:100',
};

export const EN16931_GUIDELINE = 'urn:cen.eu:en16931:2017';

type Node = Record<string, unknown>;

/** A date as CII writes it: format 102, `YYYYMMDD`. */
const date = (iso: string): Node => ({ 'udt:DateTimeString': { '@format': '102', '#': iso.replaceAll('-', '') } });

function party(p: Party): Node {
  return {
    'ram:Name': p.name,
    ...(p.registration ? { 'ram:SpecifiedLegalOrganization': { 'ram:ID': p.registration } } : {}),
    ...(p.email || p.phone
      ? {
          'ram:DefinedTradeContact': {
            ...(p.contactName ? { 'ram:PersonName': p.contactName } : {}),
            ...(p.phone ? { 'ram:TelephoneUniversalCommunication': { 'ram:CompleteNumber': p.phone } } : {}),
            ...(p.email ? { 'ram:EmailURIUniversalCommunication': { 'ram:URIID': p.email } } : {}),
          },
        }
      : {}),
    'ram:PostalTradeAddress': {
      ...(p.postalCode ? { 'ram:PostcodeCode': p.postalCode } : {}),
      ...(p.street ? { 'ram:LineOne': p.street } : {}),
      ...(p.additionalStreet ? { 'ram:LineTwo': p.additionalStreet } : {}),
      ...(p.city ? { 'ram:CityName': p.city } : {}),
      'ram:CountryID': p.country,
      ...(p.region ? { 'ram:CountrySubDivisionName': p.region } : {}),
    },
    ...(p.endpoint ? { 'ram:URIUniversalCommunication': { 'ram:URIID': { '@schemeID': p.endpoint.scheme, '#': p.endpoint.id } } } : {}),
    ...(p.vatId ? { 'ram:SpecifiedTaxRegistration': { 'ram:ID': { '@schemeID': 'VA', '#': p.vatId } } } : {}),
  };
}

export function toCii(doc: EnInvoice, guideline = EN16931_GUIDELINE): string {
  const { currency, totals } = doc;
  const invoice: Node = {
    ...NAMESPACES,
    'rsm:ExchangedDocumentContext': {
      // BT-23, which XRechnung asks for (PEPPOL-EN16931-R001): the Peppol billing process.
      ...(guideline === XRECHNUNG_SPECIFICATION ? { 'ram:BusinessProcessSpecifiedDocumentContextParameter': { 'ram:ID': PEPPOL_BILLING_PROCESS } } : {}),
      'ram:GuidelineSpecifiedDocumentContextParameter': { 'ram:ID': guideline },
    },
    'rsm:ExchangedDocument': {
      'ram:ID': doc.number,
      'ram:TypeCode': doc.typeCode,
      'ram:IssueDateTime': date(doc.issueDate),
      ...(doc.note ? { 'ram:IncludedNote': { 'ram:Content': doc.note } } : {}),
    },
    'rsm:SupplyChainTradeTransaction': {
      'ram:IncludedSupplyChainTradeLineItem': doc.lines.map((line) => ({
        'ram:AssociatedDocumentLineDocument': { 'ram:LineID': line.id },
        'ram:SpecifiedTradeProduct': { 'ram:Name': line.name },
        'ram:SpecifiedLineTradeAgreement': { 'ram:NetPriceProductTradePrice': { 'ram:ChargeAmount': line.netPrice } },
        'ram:SpecifiedLineTradeDelivery': { 'ram:BilledQuantity': { '@unitCode': 'C62', '#': line.quantity } },
        'ram:SpecifiedLineTradeSettlement': {
          'ram:ApplicableTradeTax': { 'ram:TypeCode': 'VAT', 'ram:CategoryCode': line.category, ...(line.percent === null ? {} : { 'ram:RateApplicablePercent': line.percent }) },
          'ram:SpecifiedTradeSettlementLineMonetarySummation': { 'ram:LineTotalAmount': line.netAmount },
        },
      })),
      'ram:ApplicableHeaderTradeAgreement': {
        ...(doc.buyerReference ? { 'ram:BuyerReference': doc.buyerReference } : {}),
        'ram:SellerTradeParty': party(doc.seller),
        'ram:BuyerTradeParty': party(doc.buyer),
        ...(doc.orderReference ? { 'ram:BuyerOrderReferencedDocument': { 'ram:IssuerAssignedID': doc.orderReference } } : {}),
      },
      'ram:ApplicableHeaderTradeDelivery': {},
      'ram:ApplicableHeaderTradeSettlement': {
        'ram:PaymentReference': doc.number,
        'ram:InvoiceCurrencyCode': currency,
        ...(doc.iban
          ? {
              'ram:SpecifiedTradeSettlementPaymentMeans': {
                'ram:TypeCode': doc.paymentMeansCode,
                'ram:PayeePartyCreditorFinancialAccount': { 'ram:IBANID': doc.iban },
                ...(doc.bic ? { 'ram:PayeeSpecifiedCreditorFinancialInstitution': { 'ram:BICID': doc.bic } } : {}),
              },
            }
          : {}),
        'ram:ApplicableTradeTax': doc.vat.map((entry) => ({
          'ram:CalculatedAmount': entry.tax,
          'ram:TypeCode': 'VAT',
          ...(entry.exemptionReason ? { 'ram:ExemptionReason': entry.exemptionReason } : {}),
          'ram:BasisAmount': entry.taxable,
          'ram:CategoryCode': entry.category,
          'ram:RateApplicablePercent': entry.percent,
        })),
        'ram:SpecifiedTradePaymentTerms': {
          ...(doc.paymentTerms ? { 'ram:Description': doc.paymentTerms } : {}),
          ...(doc.dueDate ? { 'ram:DueDateDateTime': date(doc.dueDate) } : {}),
        },
        'ram:SpecifiedTradeSettlementHeaderMonetarySummation': {
          'ram:LineTotalAmount': totals.lines,
          'ram:TaxBasisTotalAmount': totals.excludingTax,
          'ram:TaxTotalAmount': { '@currencyID': currency, '#': totals.tax },
          ...(isNonZero(totals.rounding) ? { 'ram:RoundingAmount': totals.rounding } : {}),
          'ram:GrandTotalAmount': totals.includingTax,
          ...(isNonZero(totals.paid) ? { 'ram:TotalPrepaidAmount': totals.paid } : {}),
          'ram:DuePayableAmount': totals.payable,
        },
        ...(doc.corrects
          ? { 'ram:InvoiceReferencedDocument': { 'ram:IssuerAssignedID': doc.corrects.number, 'ram:FormattedIssueDateTime': { 'qdt:DateTimeString': { '@format': '102', '#': doc.corrects.issueDate.replaceAll('-', '') } } } }
          : {}),
      },
    },
  };
  // Its text is as XML 1.0 can carry it already (document.ts left out what it cannot).
  return create({ version: '1.0', encoding: 'UTF-8' }, { 'rsm:CrossIndustryInvoice': invoice }).end({ prettyPrint: true });
}
