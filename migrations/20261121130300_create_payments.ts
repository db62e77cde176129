import { Knex } from 'knex';
import { tableDefaults, timestampColumn } from './schema-helpers';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('payments', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.integer('business_id').unsigned().notNullable().references('id').inTable('businesses');
    t.boolean('livemode').notNullable();
    t.integer('invoice_id').unsigned().notNullable().references('id').inTable('invoices');
    t.integer('client_id').unsigned().notNullable().references('id').inTable('clients');
    t.bigInteger('amount').notNullable();
    t.string('currency', 3).notNullable();
    t.string('status', 16).notNullable();
    t.string('method', 32).notNullable();
    t.string('gateway', 32).nullable();
    t.string('gateway_reference', 255).nullable();
    timestampColumn(t, 'paid_at').nullable();
    timestampColumn(t, 'created_at').notNullable();
    timestampColumn(t, 'updated_at').notNullable();
    t.index(['business_id', 'livemode', 'id']);
    t.index(['business_id', 'livemode', 'created_at']);
    t.index(['business_id', 'livemode', 'status', 'id']);
    t.index(['invoice_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('payments');
}
