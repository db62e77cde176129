import { Knex } from 'knex';
import { isMysql, tableDefaults, timestampColumn } from './schema-helpers';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('events', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.integer('business_id').unsigned().notNullable().references('id').inTable('businesses');
    t.boolean('livemode').notNullable();
    t.string('type', 64).notNullable();
    // The receivers' deduplication key: the same on every delivery and replay of the event.
    t.string('idempotency_key', 36).notNullable().unique();
    // The resources as the API showed them when the change committed.
    (isMysql(knex) ? t.text('data', 'mediumtext') : t.text('data')).notNullable();
    timestampColumn(t, 'created_at').notNullable();
    timestampColumn(t, 'updated_at').notNullable();
    t.index(['business_id', 'livemode', 'id']);
    t.index(['created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('events');
}
