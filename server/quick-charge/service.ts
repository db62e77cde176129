/** Quick-charge: an issued invoice and its payment link in one call, the client found by e-mail or created. */
import { Credential } from '../auth/credential';
import { ClientService, ClientView } from '../clients/service';
import { Database } from '../db/database';
import { lockInvoiceNumbering } from '../invoices/numbering';
import { InvoiceDetail, InvoiceService } from '../invoices/service';
import { QuickChargeInput } from './schema';

export const DEFAULT_DESCRIPTION = 'Payment';

export class QuickChargeService {
  constructor(
    private readonly db: Database,
    private readonly clients: ClientService,
    private readonly invoices: InvoiceService,
  ) {}

  /** One transaction: a failure leaves neither a new client nor an invoice behind. */
  async charge(cred: Credential, input: QuickChargeInput): Promise<{ invoice: InvoiceDetail; client: ClientView; payment_url: string }> {
    return this.db.transaction(async (trx) => {
      await lockInvoiceNumbering(trx, cred);
      const clientId = input.client ? (await this.clients.findOrCreate(cred, input.client)).id : input.client_id!;
      // The invoice checks that client_id names a client of the caller (422 otherwise).
      const issued = await this.invoices.createIssued(cred, {
        client_id: clientId,
        currency: input.currency,
        due_date: input.due_date,
        items: [{ description: input.description ?? DEFAULT_DESCRIPTION, quantity: 1, unit_price: input.amount }],
      });
      return { invoice: issued.invoice, client: await this.clients.get(cred, clientId), payment_url: issued.payment_url };
    });
  }
}
