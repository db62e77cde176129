/** The record of every payment: simulated in test mode now, gateway payments later. */
import Joi from 'joi';
import { Credential, Tenancy } from '../auth/credential';
import { Database } from '../db/database';
import { idFilter, listQuery, ListParams, Page, paginate } from '../http/pagination';
import { toMajor } from '../money/amount';
import { Payment, PAYMENT_STATUSES, PaymentStatus } from './model';

export interface PaymentView {
  id: number;
  invoice_id: number;
  client_id: number;
  amount: number;
  currency: string;
  status: PaymentStatus;
  method: string;
  gateway: string | null;
  gateway_reference: string | null;
  livemode: boolean;
  paid_at: string | null;
  created_at: string;
}

export function toPaymentView(row: Payment): PaymentView {
  return {
    id: row.id,
    invoice_id: row.invoice_id,
    client_id: row.client_id,
    amount: toMajor(row.amount, row.currency),
    currency: row.currency,
    status: row.status,
    method: row.method,
    gateway: row.gateway ?? null,
    gateway_reference: row.gateway_reference ?? null,
    livemode: row.livemode,
    paid_at: row.paid_at ?? null,
    created_at: row.created_at,
  };
}

export interface PaymentListParams extends ListParams {
  status?: PaymentStatus;
  invoice_id?: number;
}

export const listPaymentsQuery = listQuery({
  status: Joi.string().valid(...PAYMENT_STATUSES),
  invoice_id: idFilter('invoice_id'),
});

export class PaymentService {
  constructor(private readonly db: Database) {}

  list(cred: Credential, params: PaymentListParams): Promise<Page<PaymentView>> {
    const query = Payment.scoped(cred, this.db.current);
    if (params.status) query.where('payments.status', params.status);
    if (params.invoice_id) query.where('payments.invoice_id', params.invoice_id);
    return paginate(query, Payment.tableName, params, toPaymentView);
  }

  /** The payment history of one invoice, oldest first. */
  async ofInvoice(cred: Tenancy, invoiceId: number, conn = this.db.current): Promise<PaymentView[]> {
    const rows = await Payment.scoped(cred, conn).where('payments.invoice_id', invoiceId).orderBy('payments.id');
    return rows.map(toPaymentView);
  }
}
