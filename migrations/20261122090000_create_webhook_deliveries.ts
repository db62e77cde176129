import { Knex } from 'knex';
import { binary, tableDefaults, timestampColumn } from './schema-helpers';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_deliveries', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.integer('business_id').unsigned().notNullable().references('id').inTable('businesses');
    t.boolean('livemode').notNullable();
    t.integer('event_id').unsigned().notNullable().references('id').inTable('events');
    // The receiving key; its URL is kept as it was when the event happened.
    t.integer('api_key_id').unsigned().notNullable().references('id').inTable('api_keys');
    t.string('url', 2048).notNullable();
    t.string('status', 16).notNullable();
    t.integer('attempts').unsigned().notNullable().defaultTo(0);
    // When the delivery is due; a claim pushes it past the lease, so a dead claimer's work comes back.
    timestampColumn(t, 'next_attempt_at').notNullable();
    // Which claim may record the result: a claim whose lease expired must not overwrite a newer one.
    binary(knex, t.string('lease_id', 32)).nullable();
    t.integer('last_status_code').nullable();
    t.string('last_error', 500).nullable();
    timestampColumn(t, 'delivered_at').nullable();
    timestampColumn(t, 'created_at').notNullable();
    timestampColumn(t, 'updated_at').notNullable();
    t.index(['status', 'next_attempt_at']);
    t.index(['business_id', 'livemode', 'id']);
    t.index(['api_key_id', 'id']);
    t.index(['event_id']);
  });
  await knex.schema.createTable('webhook_attempts', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.integer('delivery_id').unsigned().notNullable().references('id').inTable('webhook_deliveries');
    t.integer('attempt').unsigned().notNullable();
    timestampColumn(t, 'started_at').notNullable();
    t.integer('duration_ms').unsigned().notNullable();
    t.integer('status_code').nullable();
    t.string('response_excerpt', 2048).nullable();
    t.string('error', 500).nullable();
    timestampColumn(t, 'created_at').notNullable();
    timestampColumn(t, 'updated_at').notNullable();
    t.index(['delivery_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_attempts');
  await knex.schema.dropTable('webhook_deliveries');
}
