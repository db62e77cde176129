/** Invoice numbers: a gapless sequence per business and mode, drawn in the issuing transaction. */
import { Knex } from 'knex';
import { Actor } from '../auth/actor';

/**
 * Increments the business's counter (the UPDATE locks its row until commit, so concurrent issuers
 * queue) and returns the formatted number. A rolled-back issue rolls the counter back: no gaps.
 */
export async function drawInvoiceNumber(trx: Knex.Transaction, actor: Actor): Promise<string> {
  const column = actor.livemode ? 'last_invoice_number_live' : 'last_invoice_number_test';
  await trx('businesses').where('id', actor.businessId).increment(column, 1);
  const row: Record<string, number> = await trx('businesses').where('id', actor.businessId).first(column);
  return `INV-${String(row[column]).padStart(6, '0')}`;
}

/**
 * Takes the counter's row lock up front. A transaction that inserts rows referencing the business
 * (their foreign-key checks take shared locks on its row) and only then draws a number would need
 * to upgrade that lock, and two such transactions deadlock on MySQL; taking it first queues them.
 */
export async function lockInvoiceNumbering(trx: Knex.Transaction, actor: Actor): Promise<void> {
  await trx('businesses').where('id', actor.businessId).first('id').forUpdate();
}
