/** Invoice and credit note numbers: each a gapless sequence per business and mode, drawn in the issuing transaction. */
import { Knex } from 'knex';
import { Actor } from '../auth/actor';
import { incrementCounter } from '../db/statement';
import { NotFound } from '../errors';

/**
 * Increments the business's counter and returns the formatted number, in one statement (the UPDATE
 * locks its row until commit, so concurrent issuers queue). A rolled-back issue rolls the counter
 * back: no gaps.
 */
export function drawInvoiceNumber(trx: Knex.Transaction, actor: Actor): Promise<string> {
  return drawNumber(trx, actor, 'invoice');
}

/** `CN-000001`: a credit note's number, from its own series (the same row lock as invoices'). */
export function drawCreditNoteNumber(trx: Knex.Transaction, actor: Actor): Promise<string> {
  return drawNumber(trx, actor, 'credit_note');
}

const SERIES = { invoice: 'INV', credit_note: 'CN' } as const;

async function drawNumber(trx: Knex.Transaction, actor: Actor, series: keyof typeof SERIES): Promise<string> {
  const column = `last_${series}_number_${actor.livemode ? 'live' : 'test'}`;
  const drawn = await incrementCounter(trx, 'businesses', column, actor.businessId);
  if (drawn === undefined) throw new NotFound('Business', actor.businessId);
  return `${SERIES[series]}-${String(drawn).padStart(6, '0')}`;
}

/**
 * Takes the counter's row lock up front. A transaction that inserts rows referencing the business
 * (their foreign-key checks take shared locks on its row) and only then draws a number would need
 * to upgrade that lock, and two such transactions deadlock on MySQL; taking it first queues them.
 */
export async function lockInvoiceNumbering(trx: Knex.Transaction, actor: Actor): Promise<void> {
  await trx('businesses').where('id', actor.businessId).first('id').forUpdate();
}
