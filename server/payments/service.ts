/**
 * The payment resource's own actions: list, read, and change a payment's metadata. Payments are
 * recorded against their invoice by the payment path (PaymentPath, server/invoices/payment-path.ts).
 */
import { Knex } from 'knex';
import { Actor } from '../auth/actor';
import { Database } from '../db/database';
import { NotFound } from '../errors';
import { Page, paginate } from '../http/pagination';
import { MetadataChanges } from '../metadata/schema';
import { updateMetadata, whereMetadata } from '../metadata/store';
import { Payment } from './model';
import { PaymentListParams, PaymentView } from './schema';
import { toPaymentView } from './view';

export class PaymentService {
  constructor(private readonly db: Database) {}

  list(actor: Actor, params: PaymentListParams): Promise<Page<PaymentView>> {
    const query = Payment.of(actor, this.db.current);
    if (params.status) query.where('payments.status', params.status);
    if (params.invoice_id) query.where('payments.invoice_id', params.invoice_id);
    whereMetadata(query, actor, this.db.current, 'payment', params.metadata);
    return paginate(query, Payment.tableName, params, toPaymentView);
  }

  async get(actor: Actor, id: number): Promise<PaymentView> {
    return toPaymentView(await this.find(actor, id, this.db.current));
  }

  /** Only the metadata of a payment changes: the money it records does not. */
  update(actor: Actor, id: number, changes: { metadata?: MetadataChanges }): Promise<PaymentView> {
    return this.db.transaction(async (trx) => {
      const row = await this.find(actor, id, trx, { lock: true });
      if (changes.metadata) await updateMetadata(trx, actor, 'payment', row, changes.metadata);
      return toPaymentView(row);
    });
  }

  private async find(actor: Actor, id: number, conn: Knex, { lock = false } = {}): Promise<Payment> {
    const query = Payment.of(actor, conn).findById(id);
    const row = await (lock ? query.forUpdate() : query);
    if (!row) throw new NotFound('Payment', id);
    return row;
  }
}
