import { Knex } from 'knex';
import { tableDefaults, timestampColumn } from './schema-helpers';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('api_keys', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.integer('business_id').unsigned().notNullable().references('id').inTable('businesses');
    t.boolean('livemode').notNullable();
    // Only the SHA-256 of the key is kept; prefix and last four are for display.
    t.string('key_hash', 64).notNullable().unique();
    t.string('prefix', 16).notNullable();
    t.string('last4', 4).notNullable();
    t.text('scopes').notNullable();
    t.string('webhook_url', 2048).nullable();
    t.string('webhook_secret', 255).nullable();
    timestampColumn(t, 'revoked_at').nullable();
    timestampColumn(t, 'created_at').notNullable();
    timestampColumn(t, 'updated_at').notNullable();
    t.index(['business_id', 'livemode']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('api_keys');
}
