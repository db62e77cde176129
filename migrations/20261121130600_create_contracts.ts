import { Knex } from 'knex';
import { binary, tableDefaults, timestampColumn } from './schema-helpers';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('contracts', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.integer('business_id').unsigned().notNullable().references('id').inTable('businesses');
    t.boolean('livemode').notNullable();
    t.string('type', 16).notNullable();
    t.string('title', 255).notNullable();
    t.integer('client_id').unsigned().notNullable().references('id').inTable('clients');
    // Up to 100 000 characters: past MySQL's 64 KB TEXT once multi-byte, so MEDIUMTEXT there.
    t.text('body', 'mediumtext').notNullable();
    // Minor units of `currency`; both null when the contract names no amount.
    t.bigInteger('amount').nullable();
    t.string('currency', 3).nullable();
    t.string('status', 32).notNullable();
    timestampColumn(t, 'client_signed_at').nullable();
    timestampColumn(t, 'business_signed_at').nullable();
    // The secret in the signing and embed links: unique across every tenant, compared byte for byte.
    binary(knex, t.string('signing_token', 64)).notNullable().unique();
    timestampColumn(t, 'created_at').notNullable();
    timestampColumn(t, 'updated_at').notNullable();
    t.index(['business_id', 'livemode', 'id']);
    t.index(['business_id', 'livemode', 'created_at']);
    t.index(['business_id', 'livemode', 'type']);
    t.index(['business_id', 'livemode', 'status']);
    t.index(['client_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('contracts');
}
