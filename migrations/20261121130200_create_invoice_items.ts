import { Knex } from 'knex';
import { tableDefaults } from './schema-helpers';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('invoice_items', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    // Items are reached only through their invoice, whose query carries the tenancy.
    t.integer('invoice_id').unsigned().notNullable().references('id').inTable('invoices').onDelete('CASCADE');
    t.integer('position').unsigned().notNullable();
    t.string('description', 1000).notNullable();
    // Ten-thousandths: quantities keep four decimals without a float or a DECIMAL column.
    t.bigInteger('quantity_units').notNullable();
    t.bigInteger('unit_price').notNullable();
    t.bigInteger('amount').notNullable();
    t.index(['invoice_id', 'position']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('invoice_items');
}
