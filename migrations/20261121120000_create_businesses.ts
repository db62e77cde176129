import { Knex } from 'knex';
import { tableDefaults, timestampColumn } from './schema-helpers';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('businesses', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.string('name', 255).notNullable();
    t.string('currency', 3).notNullable();
    t.string('country', 2).nullable();
    t.string('plan', 50).notNullable();
    timestampColumn(t, 'created_at').notNullable();
    timestampColumn(t, 'updated_at').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('businesses');
}
