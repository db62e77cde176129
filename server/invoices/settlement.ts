/** Books a change of an invoice's money and sets its status by the one rule (status.ts). */
import { Knex } from 'knex';
import { businessClock } from '../clock';
import { Invoice } from './model';
import { statusFromMoney } from './status';

export interface Booked {
  /** It was not paid before and is now: `invoice.paid` is the caller's to record. */
  becamePaid: boolean;
  /** Credits now cover it with nothing paid: its open checkout is the caller's to expire. */
  becameVoid: boolean;
}

/**
 * Patches a locked invoice's `amount_paid` and credits (a refund, a bank's failed refund, a credit
 * note) and its status as the one rule sets it from them, with `paid_at` and `voided_at` to match.
 * Mutates `invoice`, as an instance patch does.
 */
export async function bookMoney(trx: Knex.Transaction, invoice: Invoice, changes: Partial<Pick<Invoice, 'amount_paid' | 'amount_credited' | 'credit_note_ids'>>): Promise<Booked> {
  const was = invoice.status;
  const status = statusFromMoney({
    status: was,
    total: invoice.total,
    amount_paid: changes.amount_paid ?? invoice.amount_paid,
    amount_credited: changes.amount_credited ?? invoice.amount_credited,
  });
  const now = businessClock.now().toISOString();
  await invoice.$query(trx).patch({
    ...changes,
    status,
    ...(status === 'paid' && was !== 'paid' ? { paid_at: now } : {}),
    ...(status !== 'paid' && was === 'paid' ? { paid_at: null } : {}),
    ...(status === 'void' && was !== 'void' ? { voided_at: now } : {}),
  });
  return { becamePaid: status === 'paid' && was !== 'paid', becameVoid: status === 'void' && was !== 'void' };
}
