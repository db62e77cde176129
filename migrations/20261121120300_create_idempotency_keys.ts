import { Knex } from 'knex';
import { binary, tableDefaults, timestampColumn } from './schema-helpers';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('idempotency_keys', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    // The credential the key belongs to ("key_12"): keys of different credentials never collide.
    t.string('subject', 64).notNullable();
    binary(knex, t.string('idempotency_key', 255)).notNullable();
    t.string('fingerprint', 64).notNullable();
    t.string('state', 16).notNullable();
    t.integer('response_status').nullable();
    t.text('response_body', 'mediumtext').nullable();
    timestampColumn(t, 'created_at').notNullable();
    // Last claim of an in-flight key: a claim abandoned by a crashed process can be taken over.
    timestampColumn(t, 'updated_at').notNullable();
    timestampColumn(t, 'expires_at').notNullable();
    t.unique(['subject', 'idempotency_key']);
    t.index(['expires_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('idempotency_keys');
}
