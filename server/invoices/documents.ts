/**
 * An invoice's PDF (and a credit note's, and a contract's signed copy), for the API, the payment page's download link and the invoice e-mail: reads
 * what the document shows (outside any transaction) and renders it on a PDF thread. The invoice
 * while money is due, the receipt once it is paid.
 */
import path from 'node:path';
import { Actor } from '../auth/actor';
import type { SignedContractDocument } from '../contracts/pdf';
import { Database } from '../db/database';
import { NotFound } from '../errors';
import type { PdfAttachment } from '../pdf/facturx';
import { PdfFile, PdfPool } from '../pdf/pool';
import { InvoiceLinks } from './links';
import { partiesOf, paymentRowsOf } from './detail';
import { Invoice, InvoiceItem } from './model';
import { CreditNoteDocument, InvoiceDocument } from './pdf';
import type { PdfTask } from './pdf-worker';

export class InvoiceDocuments {
  private readonly renderers: PdfPool<PdfTask>;

  constructor(
    private readonly db: Database,
    private readonly links: InvoiceLinks,
    options: { threads: number },
  ) {
    this.renderers = new PdfPool(path.join(__dirname, 'pdf-worker'), options.threads);
  }

  /**
   * The PDF of the actor's invoice `id`: NotFound when it has none by that id. A request is refused
   * with ServiceUnavailable while too many PDFs wait for a thread; a job (`wait: true`) waits. With
   * an `attachment` (the invoice's CII e-invoice), the PDF is a Factur-X file: PDF/A-3b carrying it.
   */
  async pdf(actor: Actor, id: number, options: { wait: boolean; attachment?: PdfAttachment } = { wait: false }): Promise<PdfFile> {
    const conn = this.db.current;
    const invoice = await Invoice.findOwn(actor, conn, id);
    if (!invoice) throw new NotFound('Invoice', id);
    const [items, payments, parties] = await Promise.all([InvoiceItem.ofInvoice(invoice, conn), paymentRowsOf(actor, invoice, conn), partiesOf(actor, [invoice], conn)]);
    // The rows cross to the thread as data (structured clone): their columns, not their methods.
    const document: InvoiceDocument = {
      ...parties.get(invoice.id)!,
      invoice,
      items,
      payments,
      paymentUrl: invoice.status === 'draft' ? null : this.links.paymentUrl(invoice.payment_token),
    };
    const { attachment, wait } = options;
    return this.renderers.render(attachment ? { document, attachment } : document, { wait });
  }

  /**
   * A credit note's PDF (credit-notes/ reads what it shows), on the same threads as invoices'; with an
   * `attachment` (its CII e-invoice), a Factur-X file.
   */
  creditNotePdf(document: CreditNoteDocument, attachment?: PdfAttachment): Promise<PdfFile> {
    return this.renderers.render(attachment ? { document, attachment } : document, { wait: false });
  }

  /** A contract's signed copy (the signing page reads what it shows), on the same threads: a request's, refused with PdfBusy when they are full. */
  signedContractPdf(document: SignedContractDocument): Promise<PdfFile> {
    return this.renderers.render(document, { wait: false });
  }

  /** Ends the PDF threads (the server stopping). */
  close(): Promise<void> {
    return this.renderers.close();
  }
}
