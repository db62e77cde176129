import { Knex } from 'knex';
import { binary, tableDefaults, timestampColumn } from './schema-helpers';

/**
 * A business's own payment gateway credentials (sealed like webhook secrets), the checkout
 * sessions opened for its invoices, and one payment per gateway reference: a repeated gateway
 * event finds the payment already there, whatever the timing (a unique index, not a check).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('payment_gateways', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.integer('business_id').unsigned().notNullable().unique().references('id').inTable('businesses');
    t.string('provider', 16).notNullable();
    t.text('secret_key_sealed').notNullable();
    t.text('webhook_secret_sealed').notNullable();
    t.string('secret_key_last4', 4).notNullable();
    t.string('webhook_secret_last4', 4).notNullable();
    timestampColumn(t, 'created_at').notNullable();
    timestampColumn(t, 'updated_at').notNullable();
  });
  await knex.schema.createTable('checkout_sessions', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.integer('business_id').unsigned().notNullable().references('id').inTable('businesses');
    t.boolean('livemode').notNullable();
    t.integer('invoice_id').unsigned().notNullable().references('id').inTable('invoices');
    t.string('provider', 16).notNullable();
    binary(knex, t.string('session_id', 255)).notNullable().unique();
    t.string('status', 16).notNullable();
    t.bigInteger('amount').notNullable();
    t.string('currency', 3).notNullable();
    t.text('url').notNullable();
    timestampColumn(t, 'created_at').notNullable();
    timestampColumn(t, 'updated_at').notNullable();
    t.index(['invoice_id', 'status']);
  });
  await knex.schema.alterTable('payments', (t) => {
    t.unique(['gateway', 'gateway_reference']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('payments', (t) => {
    t.dropUnique(['gateway', 'gateway_reference']);
  });
  await knex.schema.dropTable('checkout_sessions');
  await knex.schema.dropTable('payment_gateways');
}
