import { Knex } from 'knex';
import { binary, tableDefaults, timestampColumn } from './schema-helpers';

/**
 * WooCommerce stores connected to the server, so every process serves them:
 * - `woo_connect_links`: a link the owner opens to connect a store through WooCommerce's app
 *   authorization; only its token's hash is kept, and the store it ends up connecting.
 * - `woo_stores`: a connected store (one business and mode per store), its consumer secret,
 *   webhook secret and the bridge's API key sealed. The row is also the leased job of the store's poll: it stays `pending`, due again at
 *   `next_attempt_at`, one process polling it at a time.
 * - `woo_order_syncs`: one leased job per store and order: an order a delivery or a poll found with
 *   something to do, worked by one process at a time.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('woo_stores', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.integer('business_id').unsigned().notNullable().references('id').inTable('businesses');
    t.boolean('livemode').notNullable();
    binary(knex, t.string('public_id', 32).notNullable()).unique();
    t.string('store_url', 2048).notNullable();
    // One connection per store: the bridge's marks on an order name one invoice, of one business and mode.
    binary(knex, t.string('store_key', 64).notNullable()).unique();
    t.string('consumer_key', 128).notNullable();
    t.text('consumer_secret').notNullable();
    t.string('key_permissions', 16).notNullable();
    t.integer('wc_key_id').nullable();
    t.integer('webhook_id').notNullable();
    t.text('webhook_secret').notNullable();
    t.integer('api_key_id').unsigned().notNullable().references('id').inTable('api_keys');
    t.text('api_key').notNullable();
    t.string('vat_meta_key', 255).nullable();
    timestampColumn(t, 'connected_at').notNullable();
    timestampColumn(t, 'poll_cursor').nullable();
    timestampColumn(t, 'legacy_orders_before').nullable();
    timestampColumn(t, 'last_polled_at').nullable();
    t.string('last_error', 1000).nullable();
    t.string('status', 16).notNullable();
    t.integer('attempts').notNullable().defaultTo(0);
    timestampColumn(t, 'next_attempt_at').nullable();
    t.string('lease_id', 32).nullable();
    timestampColumn(t, 'created_at').notNullable();
    timestampColumn(t, 'updated_at').notNullable();
    t.index(['business_id', 'livemode', 'id']);
    t.index(['status', 'next_attempt_at']);
  });
  await knex.schema.createTable('woo_connect_links', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.integer('business_id').unsigned().notNullable().references('id').inTable('businesses');
    t.boolean('livemode').notNullable();
    binary(knex, t.string('token_hash', 64).notNullable()).unique();
    t.string('store_url', 2048).nullable();
    t.boolean('store_url_fixed').notNullable();
    t.integer('woo_store_id').unsigned().nullable().references('id').inTable('woo_stores').onDelete('SET NULL');
    timestampColumn(t, 'connected_at').nullable();
    timestampColumn(t, 'expires_at').notNullable();
    timestampColumn(t, 'created_at').notNullable();
    timestampColumn(t, 'updated_at').notNullable();
  });
  await knex.schema.createTable('woo_order_syncs', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.integer('business_id').unsigned().notNullable().references('id').inTable('businesses');
    t.boolean('livemode').notNullable();
    t.integer('woo_store_id').unsigned().notNullable().references('id').inTable('woo_stores').onDelete('CASCADE');
    t.bigInteger('order_id').notNullable();
    t.string('status', 16).notNullable();
    t.integer('attempts').notNullable().defaultTo(0);
    timestampColumn(t, 'next_attempt_at').nullable();
    t.string('lease_id', 32).nullable();
    t.string('outcome', 1000).nullable();
    t.boolean('again').notNullable().defaultTo(false);
    timestampColumn(t, 'created_at').notNullable();
    timestampColumn(t, 'updated_at').notNullable();
    t.unique(['woo_store_id', 'order_id']);
    t.index(['status', 'next_attempt_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('woo_order_syncs');
  await knex.schema.dropTable('woo_connect_links');
  await knex.schema.dropTable('woo_stores');
}
