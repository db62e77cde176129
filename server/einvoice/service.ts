/** An issued invoice as an EN 16931 e-invoice: checked for what the format requires, then written. */
import type { Actor } from '../auth/actor';
import { InvalidState } from '../errors';
import type { FileBody } from '../http/routes';
import type { InvoiceService } from '../invoices/service';
import { toCii } from './cii';
import { toEnInvoice } from './document';
import { einvoiceProblems } from './readiness';
import { EinvoiceFormat, EinvoiceNotReady } from './schema';
import { toUbl } from './ubl';

const WRITERS: Record<EinvoiceFormat, (invoice: ReturnType<typeof toEnInvoice>) => string> = { ubl: (doc) => toUbl(doc), cii: (doc) => toCii(doc) };

export class EinvoiceService {
  constructor(private readonly invoices: InvoiceService) {}

  /**
   * The invoice's e-invoice in `format`. An invoice that lacks what the format requires is refused
   * with every missing field at once; a draft that lacks nothing is refused too: issue it first.
   */
  async invoice(actor: Actor, id: number, format: EinvoiceFormat): Promise<FileBody> {
    const invoice = await this.invoices.get(actor, id);
    const problems = einvoiceProblems(invoice, format);
    if (Object.keys(problems).length) throw new EinvoiceNotReady(format, problems);
    // A draft voided before it was ever issued has a number but was never an invoice either.
    if (invoice.status === 'draft' || invoice.sent_at === null) {
      throw new InvalidState('A draft is not an invoice yet: issue it (POST /invoices/{id}/send or initiate-payment), then fetch its e-invoice');
    }
    return { filename: `${invoice.number}-${format}.xml`, content: Buffer.from(WRITERS[format](toEnInvoice(invoice)), 'utf8') };
  }
}
