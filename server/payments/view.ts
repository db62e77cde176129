/** A payment as the API shows it: amounts back in major units. Pure. */
import { toMajor } from '../money/amount';
import { Payment, PaymentStatus } from './model';
import { PaymentView } from './schema';

export function toPaymentView(row: Payment): PaymentView {
  return {
    id: row.id,
    invoice_id: row.invoice_id,
    client_id: row.client_id,
    amount: toMajor(row.amount, row.currency),
    amount_refunded: toMajor(row.amount_refunded ?? 0, row.currency),
    currency: row.currency,
    status: row.status,
    method: row.method,
    gateway: row.gateway ?? null,
    gateway_reference: row.gateway_reference ?? null,
    metadata: row.metadata ?? {},
    livemode: row.livemode,
    paid_at: row.paid_at ?? null,
    created_at: row.created_at,
  };
}

const METHOD_NAMES: Record<string, string> = {
  simulated: 'Test payment',
  card: 'Card',
  bank_transfer: 'Bank transfer',
  cash: 'Cash',
  check: 'Check',
  other: 'Other',
};

/** A payment that took money, refunded since or not: what a receipt lists. */
export function tookMoney(payment: { status: PaymentStatus }): boolean {
  return payment.status === 'succeeded' || payment.status === 'refunded';
}

/** How a payment was made, as the client reads it on the payment page and the receipt. */
export function paymentMethodName(method: string): string {
  return METHOD_NAMES[method] ?? method;
}
