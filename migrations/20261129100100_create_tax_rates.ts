import { Knex } from 'knex';
import { tableDefaults, timestampColumn } from './schema-helpers';

/**
 * Tax rates: a business's named percentages, as Stripe's. The percentage is an integer of
 * ten-thousandths of a percent (19 % = 190000, 8.875 % = 88750), so no float is ever stored; a
 * rate's percentage, category and `inclusive` never change after it is made.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('tax_rates', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.integer('business_id').unsigned().notNullable().references('id').inTable('businesses');
    t.boolean('livemode').notNullable();
    t.string('display_name', 100).notNullable();
    t.integer('percentage_units').unsigned().notNullable();
    t.boolean('inclusive').notNullable();
    // EN 16931 VAT category (UNCL5305): S, Z, E, AE, K, G or O.
    t.string('category', 2).notNullable();
    t.string('country', 2).nullable();
    t.string('description', 500).nullable();
    t.string('exemption_reason', 500).nullable();
    t.boolean('active').notNullable();
    t.text('metadata').nullable();
    timestampColumn(t, 'created_at').notNullable();
    timestampColumn(t, 'updated_at').notNullable();
    t.index(['business_id', 'livemode', 'id']);
    t.index(['business_id', 'livemode', 'created_at']);
    // The `active` list filter.
    t.index(['business_id', 'livemode', 'active', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  // Their metadata index rows go with them: a rate made later under a reused id must not match them.
  await knex('metadata_entries').where('object_type', 'tax_rate').delete();
  await knex.schema.dropTable('tax_rates');
}
