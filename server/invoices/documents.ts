/**
 * An invoice's PDF, for the API, the payment page's download link and the invoice e-mail: reads
 * what the document shows (outside any transaction) and renders it. The invoice while money is due,
 * the receipt once it is paid.
 */
import { Actor } from '../auth/actor';
import { BusinessService } from '../businesses/service';
import { Client } from '../clients/model';
import { Database } from '../db/database';
import { NotFound } from '../errors';
import { InvoiceLinks } from './links';
import { itemsOf, paymentRowsOf } from './detail';
import { Invoice } from './model';
import { invoicePdf, PdfFile } from './pdf';

export class InvoiceDocuments {
  constructor(
    private readonly db: Database,
    private readonly businesses: BusinessService,
    private readonly links: InvoiceLinks,
  ) {}

  /** The PDF of the actor's invoice `id`: NotFound when it has none by that id. */
  async pdf(actor: Actor, id: number): Promise<PdfFile> {
    const conn = this.db.current;
    const invoice = await Invoice.findOwn(actor, conn, id);
    if (!invoice) throw new NotFound('Invoice');
    const [items, payments, client, business] = await Promise.all([
      itemsOf([invoice], conn),
      paymentRowsOf(actor, invoice, conn),
      Client.findOwn(actor, conn, invoice.client_id),
      this.businesses.get(actor.businessId),
    ]);
    if (!client) throw new NotFound('Client');
    return invoicePdf({
      businessName: business.name,
      client: { name: client.name, email: client.email, company: client.company ?? null, address: client.address ?? null },
      invoice,
      items: items.get(invoice.id) ?? [],
      payments,
      paymentUrl: invoice.status === 'draft' ? null : this.links.paymentUrl(invoice.payment_token),
    });
  }
}
