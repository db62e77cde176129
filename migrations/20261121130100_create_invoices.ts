import { Knex } from 'knex';
import { binary, tableDefaults, timestampColumn } from './schema-helpers';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('invoices', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.integer('business_id').unsigned().notNullable().references('id').inTable('businesses');
    t.boolean('livemode').notNullable();
    // No cascade: a client with invoices cannot be deleted.
    t.integer('client_id').unsigned().notNullable().references('id').inTable('clients');
    t.string('number', 20).nullable();
    t.string('status', 16).notNullable();
    t.string('currency', 3).notNullable();
    t.string('issue_date', 10).notNullable();
    t.string('due_date', 10).notNullable();
    t.bigInteger('subtotal').notNullable();
    t.bigInteger('total').notNullable();
    t.bigInteger('amount_paid').notNullable().defaultTo(0);
    t.text('notes').nullable();
    binary(knex, t.string('payment_token', 64)).notNullable().unique();
    timestampColumn(t, 'sent_at').nullable();
    timestampColumn(t, 'viewed_at').nullable();
    timestampColumn(t, 'paid_at').nullable();
    timestampColumn(t, 'voided_at').nullable();
    timestampColumn(t, 'created_at').notNullable();
    timestampColumn(t, 'updated_at').notNullable();
    t.unique(['business_id', 'livemode', 'number']);
    t.index(['business_id', 'livemode', 'id']);
    t.index(['business_id', 'livemode', 'created_at']);
    t.index(['business_id', 'livemode', 'status', 'id']);
    t.index(['business_id', 'livemode', 'client_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('invoices');
}
