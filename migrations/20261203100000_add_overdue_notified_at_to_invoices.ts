import { Knex } from 'knex';
import { dropColumnsInPlace, timestampColumn } from './schema-helpers';

/**
 * Overdue invoices: `overdue_notified_at` is when `invoice.overdue` was recorded for the invoice
 * (null: not yet). The sweep (server/invoices/overdue.ts) picks payable, unnotified invoices by due
 * date through `invoices_overdue_sweep`; `GET /invoices?overdue=` goes through
 * `invoices_by_due_date` within a business and mode.
 *
 * At the upgrade (contract, "Wave 3 clarifications"), an issued invoice whose due date had already
 * passed is overdue but fires no `invoice.overdue`: it is marked notified now. "Passed" is judged
 * by the clock of its business and mode: a test mode's frozen time where one is stored, the real
 * time otherwise.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('invoices', (t) => {
    timestampColumn(t, 'overdue_notified_at').nullable();
    t.index(['status', 'overdue_notified_at', 'due_date'], 'invoices_overdue_sweep');
    t.index(['business_id', 'livemode', 'due_date'], 'invoices_by_due_date');
  });
  const now = new Date();
  const stamp = now.toISOString().replace('T', ' ').replace('Z', '');
  const today = now.toISOString().slice(0, 10);
  const frozen = knex('business_clocks as bc').select(knex.raw('1')).whereRaw('bc.business_id = invoices.business_id').andWhere('invoices.livemode', 0);
  // Only the invoices overdue at the upgrade: one paid or void now may still become overdue (a refund) and then fires.
  const owing = (q: Knex.QueryBuilder): void => {
    void q.whereIn('status', ['sent', 'viewed', 'partial']).andWhereRaw('total > amount_paid + amount_credited');
  };
  // Invoices on the real time.
  await knex('invoices').where(owing).andWhere('due_date', '<', today).whereNull('overdue_notified_at').whereNotExists(frozen).update({ overdue_notified_at: stamp });
  // Test-mode invoices of a business whose test clock is frozen: passed by that clock.
  await knex('invoices')
    .where(owing)
    .andWhere('livemode', 0)
    .whereNull('overdue_notified_at')
    .whereExists(
      knex('business_clocks as bc')
        .select(knex.raw('1'))
        .whereRaw('bc.business_id = invoices.business_id')
        .andWhereRaw('invoices.due_date < substr(bc.frozen_time, 1, 10)'),
    )
    .update({ overdue_notified_at: stamp });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('invoices', (t) => {
    t.dropIndex(['status', 'overdue_notified_at', 'due_date'], 'invoices_overdue_sweep');
    t.dropIndex(['business_id', 'livemode', 'due_date'], 'invoices_by_due_date');
  });
  await dropColumnsInPlace(knex, 'invoices', ['overdue_notified_at']);
}
