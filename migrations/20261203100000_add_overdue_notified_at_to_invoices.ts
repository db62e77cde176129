import { Knex } from 'knex';
import { utcDate } from '../server/clock';
import { FROZEN_DATE_SQL } from '../server/db/clocks';
import { overdueSql } from '../server/invoices/status';
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
  const frozen = knex('business_clocks').select(knex.raw('1')).whereRaw('business_clocks.business_id = invoices.business_id').andWhere('invoices.livemode', 0);
  // Only the invoices overdue at the upgrade, by the rule the server judges with: one paid or void now may still become overdue (a refund) and then fires.
  // Invoices on the real time.
  await knex('invoices').whereRaw(overdueSql('?'), [utcDate(now)]).whereNull('overdue_notified_at').whereNotExists(frozen).update({ overdue_notified_at: stamp });
  // Test-mode invoices of a business whose test clock is frozen: overdue by that clock.
  await knex('invoices')
    .where('livemode', 0)
    .whereNull('overdue_notified_at')
    .whereExists(frozen.clone().whereRaw(overdueSql(FROZEN_DATE_SQL)))
    .update({ overdue_notified_at: stamp });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('invoices', (t) => {
    t.dropIndex(['status', 'overdue_notified_at', 'due_date'], 'invoices_overdue_sweep');
    t.dropIndex(['business_id', 'livemode', 'due_date'], 'invoices_by_due_date');
  });
  await dropColumnsInPlace(knex, 'invoices', ['overdue_notified_at']);
}
