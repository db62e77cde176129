import { Knex } from 'knex';
import { tableDefaults, timestampColumn } from './schema-helpers';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('expenses', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.integer('business_id').unsigned().notNullable().references('id').inTable('businesses');
    t.boolean('livemode').notNullable();
    // Minor units of `currency`.
    t.bigInteger('amount').notNullable();
    t.string('currency', 3).notNullable();
    t.string('category', 64).notNullable();
    t.string('description', 1000).nullable();
    t.string('vendor', 255).nullable();
    // A calendar date, not an instant: 'YYYY-MM-DD' text compares in date order on both drivers.
    t.string('date', 10).notNullable();
    t.text('notes').nullable();
    timestampColumn(t, 'created_at').notNullable();
    timestampColumn(t, 'updated_at').notNullable();
    t.index(['business_id', 'livemode', 'id']);
    t.index(['business_id', 'livemode', 'created_at']);
    t.index(['business_id', 'livemode', 'category']);
    t.index(['business_id', 'livemode', 'date']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('expenses');
}
