import { Knex } from 'knex';
import { binary, timestampColumn } from './schema-helpers';

/**
 * Pending refunds are reconciled by a sweep (node-cron): `next_attempt_at` says when a pending
 * refund is next read back from its gateway (or sent, under its own idempotency key), and
 * `lease_id` is the claim of the one process doing it. Refunds already pending at upgrade are due
 * at once. The invoice index serves `GET /refunds?invoice_id=`.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('refunds', (t) => {
    t.integer('attempts').unsigned().notNullable().defaultTo(0);
    timestampColumn(t, 'next_attempt_at').nullable();
    binary(knex, t.string('lease_id', 32)).nullable();
    t.index(['status', 'next_attempt_at']);
    t.index(['business_id', 'livemode', 'invoice_id']);
  });
  await knex('refunds').where({ status: 'pending' }).update({ next_attempt_at: knex.ref('created_at') });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('refunds', (t) => {
    t.dropIndex(['business_id', 'livemode', 'invoice_id']);
    t.dropIndex(['status', 'next_attempt_at']);
    t.dropColumn('lease_id');
    t.dropColumn('next_attempt_at');
    t.dropColumn('attempts');
  });
}
