/**
 * An invoice's PDF (and a credit note's, and a contract's signed copy), for the API, the payment page's download link and the invoice e-mail: reads
 * what the document shows (outside any transaction) and renders it on a PDF thread. The invoice
 * while money is due, the receipt once it is paid.
 */
import { Actor } from '../auth/actor';
import type { SignedContractDocument } from '../contracts/pdf';
import { Database } from '../db/database';
import { NotFound } from '../errors';
import type { DocumentRenderer, PdfFile } from '../pdf/pool';
import { toPaymentView } from '../payments/view';
import { InvoiceLinks } from './links';
import { invoiceDetail, partiesOf, paymentRowsOf } from './detail';
import type { InvoiceDetail } from './schema';
import { Invoice, InvoiceItem } from './model';
import { CreditNoteDocument, InvoiceDocument } from './pdf';
import type { PdfTask } from './pdf-worker';

export class InvoiceDocuments {
  /** `renderers`: the document threads (services.ts makes them, with the e-invoices' tasks beside these). */
  constructor(
    private readonly db: Database,
    private readonly links: InvoiceLinks,
    private readonly renderers: DocumentRenderer<PdfTask>,
  ) {}

  /**
   * The PDF of the actor's invoice `id`: NotFound when it has none by that id. A request is refused
   * with ServiceUnavailable while too many PDFs wait for a thread; a job (`wait: true`) waits.
   */
  async pdf(actor: Actor, id: number, options: { wait: boolean } = { wait: false }): Promise<PdfFile> {
    const { document } = await this.read(actor, id);
    return this.renderers.render(document, options);
  }

  /**
   * What the invoice's PDF shows, and the invoice as the API shows it, from one read: an e-invoice
   * is written from the one and a Factur-X PDF made of the other. NotFound when the actor has none by that id.
   */
  async read(actor: Actor, id: number): Promise<{ invoice: InvoiceDetail; document: InvoiceDocument }> {
    const conn = this.db.current;
    const row = await Invoice.findOwn(actor, conn, id);
    if (!row) throw new NotFound('Invoice', id);
    const [items, payments, parties] = await Promise.all([
      InvoiceItem.ofInvoice(row, conn),
      paymentRowsOf(actor, row, conn),
      partiesOf(actor, [row], conn).then((byInvoice) => byInvoice.get(row.id)!),
    ]);
    const invoice = await invoiceDetail(actor, row, conn, this.links, { items, payments: payments.map(toPaymentView), parties });
    // The rows cross to the thread as data (structured clone): their columns, not their methods.
    const document: InvoiceDocument = {
      ...parties,
      invoice: row,
      items,
      payments,
      paymentUrl: row.status === 'draft' ? null : this.links.paymentUrl(row.payment_token),
    };
    return { invoice, document };
  }

  /** A credit note's PDF (credit-notes/ reads what it shows), on the same threads as invoices'. */
  creditNotePdf(document: CreditNoteDocument): Promise<PdfFile> {
    return this.renderers.render(document, { wait: false });
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
