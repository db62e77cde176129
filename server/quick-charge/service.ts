/** Quick-charge: an issued invoice and its payment link in one call, the client found by e-mail or created. */
import { Credential } from '../auth/credential';
import { BusinessService } from '../businesses/service';
import { ClientService, ClientView } from '../clients/service';
import { Database } from '../db/database';
import { ValidationFailed } from '../errors';
import { lockInvoiceNumbering } from '../invoices/numbering';
import { InvoiceDetail, InvoiceService } from '../invoices/service';
import { collectMinor } from '../money/amount';
import { QuickChargeInput } from './schema';

export const DEFAULT_DESCRIPTION = 'Payment';

export class QuickChargeService {
  constructor(
    private readonly db: Database,
    private readonly businesses: BusinessService,
    private readonly clients: ClientService,
    private readonly invoices: InvoiceService,
  ) {}

  /** One transaction: a failure leaves neither a new client nor an invoice behind. */
  async charge(cred: Credential, input: QuickChargeInput): Promise<{ invoice: InvoiceDetail; client: ClientView; payment_url: string }> {
    // The amount is checked here, so that its errors name `amount`, not the invoice line it becomes.
    const currency = input.currency ?? (await this.businesses.ofCredential(cred)).currency;
    const errors = new Map<string, string[]>();
    collectMinor(errors, 'amount', input.amount, currency);
    if (errors.size) throw new ValidationFailed(Object.fromEntries(errors));

    return this.db.transaction(async (trx) => {
      await lockInvoiceNumbering(trx, cred);
      const clientId = input.client ? (await this.clients.findOrCreate(cred, input.client)).id : input.client_id!;
      // The invoice checks that client_id names a client of the caller (422 otherwise).
      const issued = await this.invoices.createIssued(cred, {
        client_id: clientId,
        currency,
        due_date: input.due_date,
        items: [{ description: input.description ?? DEFAULT_DESCRIPTION, quantity: 1, unit_price: input.amount }],
      });
      return { invoice: issued.invoice, client: await this.clients.get(cred, clientId), payment_url: issued.payment_url };
    });
  }
}
