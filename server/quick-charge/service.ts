/** Quick-charge: an issued invoice and its payment link in one call, the client found by e-mail or created. */
import { Knex } from 'knex';
import { Actor } from '../auth/actor';
import { BusinessService } from '../businesses/service';
import { ClientView } from '../clients/schema';
import { ClientService, UNKNOWN_CLIENT_ID } from '../clients/service';
import { Database } from '../db/database';
import { NotFound, ValidationFailed } from '../errors';
import { lockInvoiceNumbering } from '../invoices/numbering';
import { InvoiceService } from '../invoices/service';
import { collectMinor } from '../money/amount';
import { QuickChargeInput, QuickChargeResult } from './schema';
import { toQuickChargeResult } from './view';

export const DEFAULT_DESCRIPTION = 'Payment';

/** The invoice line a quick-charge `amount` becomes is given by these top-level fields. */
const AMOUNT_FORM_FIELDS: Readonly<Record<string, string>> = {
  'items.0.description': 'description',
  'items.0.unit_price': 'amount',
  'items.0.tax_rate_ids': 'tax_rate_ids',
};

/** The invoice's field errors for its one line, named after the fields the caller sent. */
function namedAfterAmountForm(err: unknown): unknown {
  if (!(err instanceof ValidationFailed) || !err.details) return err;
  return new ValidationFailed(Object.fromEntries(Object.entries(err.details).map(([field, messages]) => [AMOUNT_FORM_FIELDS[field] ?? field, messages])), err.message);
}

export class QuickChargeService {
  constructor(
    private readonly db: Database,
    private readonly businesses: BusinessService,
    private readonly clients: ClientService,
    private readonly invoices: InvoiceService,
  ) {}

  /** One transaction: a failure leaves neither a new client nor an invoice behind. */
  async charge(actor: Actor, input: QuickChargeInput): Promise<QuickChargeResult> {
    // The amount is checked here, so that its errors name `amount`, not the invoice line it becomes.
    const currency = input.currency ?? (await this.businesses.ofCredential(actor)).currency;
    const errors = new Map<string, string[]>();
    if (input.amount !== undefined) collectMinor(errors, 'amount', input.amount, currency);
    if (errors.size) throw new ValidationFailed(Object.fromEntries(errors));

    return this.db.transaction(async (trx) => {
      const client = await this.clientOf(trx, actor, input);
      const issued = await this.invoices
        .createIssued(actor, {
          client_id: client.id,
          currency,
          issue_date: input.issue_date,
          due_date: input.due_date,
          items: input.items ?? [
            { description: input.description ?? DEFAULT_DESCRIPTION, quantity: 1, unit_price: input.amount!, ...(input.tax_rate_ids ? { tax_rate_ids: input.tax_rate_ids } : {}) },
          ],
          default_tax_rate_ids: input.default_tax_rate_ids,
          tax_exempt: input.tax_exempt,
          rounding_amount: input.rounding_amount,
          notes: input.notes,
          metadata: input.metadata,
        })
        .catch((err: unknown) => {
          throw input.items ? err : namedAfterAmountForm(err);
        });
      return toQuickChargeResult(issued, client);
    });
  }

  private async clientOf(trx: Knex.Transaction, actor: Actor, input: QuickChargeInput): Promise<ClientView> {
    if (!input.client) {
      try {
        return await this.clients.get(actor, input.client_id!);
      } catch (err) {
        if (err instanceof NotFound) throw new ValidationFailed({ client_id: [UNKNOWN_CLIENT_ID] });
        throw err;
      }
    }
    const existing = await this.clients.withEmail(actor, input.client.email);
    if (existing) return existing;
    // Creating the client shares the business row's lock (its foreign key) before the invoice number
    // needs that row exclusively: take it exclusively first (see lockInvoiceNumbering).
    await lockInvoiceNumbering(trx, actor);
    return this.clients.findOrCreate(actor, input.client);
  }
}
