/** The task of a PDF thread (see pdf/pool.ts): one invoice or credit note document rendered. */
import type { PdfFile } from '../pdf/pool';
import { CreditNoteDocument, creditNotePdf, InvoiceDocument, invoicePdf } from './pdf';

export type PdfTask = InvoiceDocument | CreditNoteDocument;

export default function render(task: PdfTask): Promise<PdfFile> {
  return 'creditNote' in task ? creditNotePdf(task) : invoicePdf(task);
}
