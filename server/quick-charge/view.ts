/** A quick charge as the API shows it: the issued invoice, its client and where the client pays. Pure. */
import { ClientView } from '../clients/schema';
import { IssuedInvoice } from '../invoices/service';
import { QuickChargeResult } from './schema';

export function toQuickChargeResult(issued: IssuedInvoice, client: ClientView): QuickChargeResult {
  return { invoice: issued.invoice, client, payment_url: issued.payment_url };
}
