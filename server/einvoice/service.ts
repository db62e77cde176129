/**
 * Issued invoices and credit notes as EN 16931 e-invoices: read and checked for what the format
 * requires here, then written on the document threads (einvoice/worker.ts), as PDFs are: its XML, or
 * for Factur-X the PDF with the CII document embedded.
 */
import type { Logger } from 'pino';
import type { Actor } from '../auth/actor';
import type { BusinessService } from '../businesses/service';
import type { CreditNoteService } from '../credit-notes/service';
import type { MailAttachment } from '../email/queue';
import { InvalidState } from '../errors';
import type { FileBody } from '../http/routes';
import type { InvoiceDocuments } from '../invoices/documents';
import type { CreditNoteDocument, InvoiceDocument } from '../invoices/pdf';
import type { InvoiceDetail } from '../invoices/schema';
import type { InvoiceService } from '../invoices/service';
import type { DocumentRenderer } from '../pdf/pool';
import { creditNoteSource, EinvoiceSource, invoiceSource } from './document';
import { einvoiceProblems } from './readiness';
import { EinvoiceFormat, EinvoiceNotReady } from './schema';
import type { EinvoiceTask } from './worker';

export class EinvoiceService {
  constructor(
    private readonly businesses: BusinessService,
    private readonly invoices: InvoiceService,
    private readonly creditNotes: CreditNoteService,
    private readonly documents: InvoiceDocuments,
    private readonly renderers: DocumentRenderer<EinvoiceTask>,
    private readonly logger: Logger,
  ) {}

  /**
   * The invoice's e-invoice in `format`. An invoice that lacks what the format requires is refused
   * with every missing field at once; a draft that lacks nothing is refused too: issue it first.
   */
  invoice(actor: Actor, id: number, format: EinvoiceFormat): Promise<FileBody> {
    return this.invoiceFile(actor, id, format, { wait: false });
  }

  /**
   * `/send` checks, in its transaction, that the invoice it just issued (or sends again) is ready for
   * the business's e-invoice format: if not, it is refused and nothing is issued or sent. The paths
   * name where to fix it, as for a draft, when it was one.
   */
  assertReadyToSend(invoice: InvoiceDetail, format: EinvoiceFormat, wasDraft: boolean): void {
    const problems = einvoiceProblems({ ...invoiceSource(invoice), draft: wasDraft }, format);
    if (Object.keys(problems).length) throw new EinvoiceNotReady(format, problems);
  }

  /**
   * What an invoice e-mail carries: the PDF, with the business's XML e-invoice beside it, or its
   * Factur-X PDF instead. An invoice no longer ready for the format (the format changed after
   * `/send`, which checked it) still goes, with the plain PDF.
   */
  async emailAttachments(actor: Actor, invoiceId: number): Promise<MailAttachment[]> {
    const format = (await this.businesses.get(actor.businessId)).einvoice_format;
    const pdf = async () => ({ ...(await this.documents.pdf(actor, invoiceId, { wait: true })), contentType: 'application/pdf' });
    if (!format) return [await pdf()];
    try {
      const einvoice = await this.invoiceFile(actor, invoiceId, format, { wait: true });
      const file = { filename: einvoice.filename, content: einvoice.content, contentType: einvoice.type! };
      return format === 'facturx' ? [file] : [await pdf(), file];
    } catch (err) {
      if (!(err instanceof EinvoiceNotReady)) throw err;
      this.logger.warn({ invoiceId, format, fields: Object.keys(err.details ?? {}) }, 'invoice e-mail sent without its e-invoice: the invoice is no longer ready for the format');
      return [await pdf()];
    }
  }

  /** The credit note's e-invoice in `format`: UBL's CreditNote, CII's type 381, each naming the invoice it corrects. */
  async creditNote(actor: Actor, id: number, format: EinvoiceFormat): Promise<FileBody> {
    const creditNote = await this.creditNotes.get(actor, id);
    const invoice = await this.invoices.get(actor, creditNote.invoice_id);
    return this.fileOf(creditNoteSource(creditNote, invoice), format, () => this.creditNotes.document(actor, id), { wait: false });
  }

  private async invoiceFile(actor: Actor, id: number, format: EinvoiceFormat, options: { wait: boolean }): Promise<FileBody> {
    const { invoice, document } = await this.documents.read(actor, id);
    return this.fileOf(invoiceSource(invoice), format, () => Promise.resolve(document), options);
  }

  /**
   * The document in `format`, once readiness finds nothing missing, written on a document thread:
   * its XML, or for Factur-X the PDF of `pdf` (read only then) carrying its CII.
   */
  private async fileOf(
    source: EinvoiceSource,
    format: EinvoiceFormat,
    pdf: () => Promise<InvoiceDocument | CreditNoteDocument>,
    options: { wait: boolean },
  ): Promise<FileBody> {
    const problems = einvoiceProblems(source, format);
    if (Object.keys(problems).length) throw new EinvoiceNotReady(format, problems, source.kind === 'credit_note' ? 'credit note' : 'invoice');
    if (source.draft) throw new InvalidState('A draft is not an invoice yet: issue it (POST /invoices/{id}/send or initiate-payment), then fetch its e-invoice');
    const task: EinvoiceTask = format === 'facturx' ? { einvoice: source, format, pdf: await pdf() } : { einvoice: source, format };
    const { filename, content } = await this.renderers.render(task, options);
    return { filename, content, type: format === 'facturx' ? 'application/pdf' : 'application/xml' };
  }
}
