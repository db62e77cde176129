import { Knex } from 'knex';
import { tableDefaults, timestampColumn } from './schema-helpers';

/**
 * Owner sessions of the OAuth consent pages, kept on the server so that signing out or a password
 * reset ends them. The cookie holds a random token; only its SHA-256 is stored. Sessions signed
 * before this migration were self-contained signed cookies: they no longer open, and the owner
 * signs in again.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('owner_sessions', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.integer('owner_id').unsigned().notNullable().references('id').inTable('business_owners');
    t.string('token_hash', 64).notNullable().unique();
    timestampColumn(t, 'expires_at').notNullable();
    timestampColumn(t, 'created_at').notNullable();
    timestampColumn(t, 'updated_at').notNullable();
    t.index(['owner_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('owner_sessions');
}
