/** The task of a PDF thread (see pdf/pool.ts): one invoice, credit note or signed contract document rendered. */
import { SignedContractDocument, signedContractPdf } from '../contracts/pdf';
import type { PdfAttachment } from '../pdf/facturx';
import type { PdfFile } from '../pdf/pool';
import { CreditNoteDocument, creditNotePdf, InvoiceDocument, invoicePdf } from './pdf';

/** An invoice or a credit note with its e-invoice, made as a Factur-X PDF (PDF/A-3b). */
export interface WithEinvoice {
  document: InvoiceDocument | CreditNoteDocument;
  attachment: PdfAttachment;
}

export type PdfTask = InvoiceDocument | CreditNoteDocument | SignedContractDocument | WithEinvoice;

export default function render(task: PdfTask): Promise<PdfFile> {
  if ('attachment' in task) {
    const { document, attachment } = task;
    return 'creditNote' in document ? creditNotePdf(document, attachment) : invoicePdf(document, attachment);
  }
  if ('creditNote' in task) return creditNotePdf(task);
  if ('contract' in task) return signedContractPdf(task);
  return invoicePdf(task);
}
