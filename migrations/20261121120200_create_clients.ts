import { Knex } from 'knex';
import { binary, tableDefaults, timestampColumn } from './schema-helpers';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('clients', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.integer('business_id').unsigned().notNullable().references('id').inTable('businesses');
    t.boolean('livemode').notNullable();
    t.string('name', 255).notNullable();
    t.string('email', 254).notNullable();
    // Lower-cased copies, compared byte for byte so both drivers agree on uniqueness and search.
    binary(knex, t.string('email_normalized', 254)).notNullable();
    binary(knex, t.text('search_text')).notNullable();
    t.string('phone', 50).nullable();
    t.string('company', 255).nullable();
    t.string('address', 1000).nullable();
    timestampColumn(t, 'created_at').notNullable();
    timestampColumn(t, 'updated_at').notNullable();
    t.unique(['business_id', 'livemode', 'email_normalized']);
    t.index(['business_id', 'livemode', 'id']);
    t.index(['business_id', 'livemode', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('clients');
}
