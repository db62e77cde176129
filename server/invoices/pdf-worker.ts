/** The task of a PDF thread (see pdf/pool.ts): one invoice document rendered. */
import type { PdfFile } from '../pdf/pool';
import { InvoiceDocument, invoicePdf } from './pdf';

export default function render(document: InvoiceDocument): Promise<PdfFile> {
  return invoicePdf(document);
}
