/** The e-invoice request: which format; and the refusal of an invoice that lacks what it needs. */
import Joi from 'joi';
import { EINVOICE_FORMATS, EinvoiceFormat } from '../businesses/schema';
import { AppError, FieldErrors } from '../errors';

/**
 * The formats served (businesses/schema.ts lists them, for a business may choose one for its
 * e-mails): `ubl` (UBL 2.1 per Peppol BIS Billing 3.0), `cii` (UN/CEFACT CII D16B, EN 16931),
 * `facturx` (the PDF as PDF/A-3 with the CII embedded), and XRechnung 3.0 in either syntax.
 */
export { EINVOICE_FORMATS, type EinvoiceFormat };

export interface EinvoiceQuery {
  format: EinvoiceFormat;
}

export const einvoiceQuery = Joi.object<EinvoiceQuery>({
  format: Joi.string()
    .valid(...EINVOICE_FORMATS)
    .required()
    .description('ubl: UBL 2.1 Invoice or CreditNote per Peppol BIS Billing 3.0; cii: UN/CEFACT CII D16B CrossIndustryInvoice (EN 16931); facturx: the PDF as PDF/A-3 with the CII document embedded as factur-x.xml (Factur-X 1.0 / ZUGFeRD 2, profile EN 16931); xrechnung-ubl, xrechnung-cii: XRechnung 3.0. An unknown format is a 400'),
});

/** 422: the invoice lacks what the format requires; `errors` names each field by its path and the rule it breaks. */
export class EinvoiceNotReady extends AppError {
  static readonly code = 'einvoice_not_ready';

  constructor(format: string, details: FieldErrors, document: 'invoice' | 'credit note' = 'invoice') {
    super(422, EinvoiceNotReady.code, `The ${document} lacks what the ${format} e-invoice format requires: see errors`, details);
  }
}
