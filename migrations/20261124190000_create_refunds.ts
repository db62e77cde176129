import { Knex } from 'knex';
import { tableDefaults, timestampColumn } from './schema-helpers';

/**
 * Refunds of payments. A payment keeps `amount_refunded` (reserved before a gateway is asked, so two
 * refunds can never return more than was paid) and `amount_applied`: the part of it that counted
 * towards its invoice (less than `amount` when a gateway took more than was due), so a refund lowers
 * the invoice's `amount_paid` only by what the payment had added. `unique_reference` makes a
 * gateway's refund id (one made in its own dashboard) recorded once.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('payments', (t) => {
    t.bigInteger('amount_refunded').notNullable().defaultTo(0);
    t.bigInteger('amount_applied').nullable();
  });
  await knex('payments').update({ amount_applied: knex.ref('amount') });
  await knex.schema.createTable('refunds', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.integer('business_id').unsigned().notNullable().references('id').inTable('businesses');
    t.boolean('livemode').notNullable();
    t.integer('payment_id').unsigned().notNullable().references('id').inTable('payments');
    t.integer('invoice_id').unsigned().notNullable().references('id').inTable('invoices');
    t.bigInteger('amount').notNullable();
    t.string('currency', 3).notNullable();
    t.string('reason', 500).nullable();
    t.string('status', 16).notNullable();
    t.string('gateway', 32).notNullable();
    t.string('gateway_reference', 255).nullable();
    t.string('unique_reference', 255).nullable();
    t.string('failure_reason', 500).nullable();
    t.text('metadata').nullable();
    timestampColumn(t, 'created_at').notNullable();
    timestampColumn(t, 'updated_at').notNullable();
    t.unique(['gateway', 'unique_reference']);
    t.index(['business_id', 'livemode', 'payment_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('refunds');
  await knex.schema.alterTable('payments', (t) => {
    t.dropColumn('amount_applied');
    t.dropColumn('amount_refunded');
  });
}
