/**
 * The task of a document thread (pdf/pool.ts): a PDF (invoices/pdf-worker.ts), or an e-invoice
 * written from its source: its XML, or for Factur-X the PDF carrying its CII document. Writing a
 * 60-line invoice's XML takes the CPU a few milliseconds, which on the request thread had held up
 * every other request meanwhile (bench:einvoice-http); here the request thread only reads the
 * invoice, checks it is ready, and sends the answer.
 */
import renderPdf, { PdfTask } from '../invoices/pdf-worker';
import type { CreditNoteDocument, InvoiceDocument } from '../invoices/pdf';
import { FACTURX_ATTACHMENT_NAME } from '../expenses/received-document';
import type { PdfFile } from '../pdf/pool';
import { lowerThisThreadPriority } from '../pdf/thread-priority';
import { EN16931_GUIDELINE, toCii } from './cii';
import { EinvoiceSource, EnInvoice, toEnInvoice, XRECHNUNG_SPECIFICATION } from './document';
import type { EinvoiceFormat } from './schema';
import { PEPPOL_CUSTOMIZATION, toUbl } from './ubl';

type XmlFormat = Exclude<EinvoiceFormat, 'facturx'>;

/** The XML formats' writers; Factur-X embeds the `cii` document in the PDF. */
const XML_WRITERS: Record<XmlFormat, (doc: EnInvoice) => string> = {
  ubl: (doc) => toUbl(doc, PEPPOL_CUSTOMIZATION),
  cii: (doc) => toCii(doc, EN16931_GUIDELINE),
  'xrechnung-ubl': (doc) => toUbl(doc, XRECHNUNG_SPECIFICATION),
  'xrechnung-cii': (doc) => toCii(doc, XRECHNUNG_SPECIFICATION),
};

/** An e-invoice to write, from a source readiness has passed: an XML format, or Factur-X with the PDF it is embedded in. */
export type EinvoiceTask = { einvoice: EinvoiceSource; format: XmlFormat } | { einvoice: EinvoiceSource; format: 'facturx'; pdf: InvoiceDocument | CreditNoteDocument };

export type DocumentTask = PdfTask | EinvoiceTask;

lowerThisThreadPriority();

export default async function render(task: DocumentTask): Promise<PdfFile> {
  if (!('einvoice' in task)) return renderPdf(task);
  const { einvoice: source } = task;
  const document = toEnInvoice(source);
  if (task.format !== 'facturx') {
    return { filename: `${source.number}-${task.format}.xml`, content: Buffer.from(XML_WRITERS[task.format](document), 'utf8') };
  }
  const { content } = await renderPdf({ document: task.pdf, attachment: { filename: FACTURX_ATTACHMENT_NAME, xml: XML_WRITERS.cii(document) } });
  return { filename: `${source.number}-facturx.pdf`, content };
}
