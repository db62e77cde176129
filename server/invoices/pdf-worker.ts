/** The task of a PDF thread (see pdf/pool.ts): one invoice, credit note or signed contract document rendered. */
import { SignedContractDocument, signedContractPdf } from '../contracts/pdf';
import type { PdfFile } from '../pdf/pool';
import { CreditNoteDocument, creditNotePdf, InvoiceDocument, invoicePdf } from './pdf';

export type PdfTask = InvoiceDocument | CreditNoteDocument | SignedContractDocument;

export default function render(task: PdfTask): Promise<PdfFile> {
  if ('creditNote' in task) return creditNotePdf(task);
  if ('contract' in task) return signedContractPdf(task);
  return invoicePdf(task);
}
