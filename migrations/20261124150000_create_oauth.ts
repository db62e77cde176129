import { Knex } from 'knex';
import { binary, tableDefaults, timestampColumn } from './schema-helpers';

/**
 * OAuth apps of platforms, the business owners who approve them, the grants an owner gave
 * (app × business × mode × scopes), and the grant's codes and tokens, every secret stored as a
 * SHA-256 hash (they are random and long; passwords, which are not, use scrypt).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('oauth_apps', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.string('name', 255).notNullable();
    binary(knex, t.string('client_id', 64)).notNullable().unique();
    // Null for a public app (no secret: PKCE is its proof).
    t.string('client_secret_hash', 64).nullable();
    t.text('redirect_uris').notNullable();
    t.string('webhook_url', 2048).nullable();
    t.text('webhook_secret_sealed').nullable();
    timestampColumn(t, 'revoked_at').nullable();
    timestampColumn(t, 'created_at').notNullable();
    timestampColumn(t, 'updated_at').notNullable();
  });
  await knex.schema.createTable('business_owners', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.integer('business_id').unsigned().notNullable().references('id').inTable('businesses');
    t.string('email', 254).notNullable();
    t.string('email_normalized', 508).notNullable().unique();
    t.string('password_hash', 255).notNullable();
    timestampColumn(t, 'created_at').notNullable();
    timestampColumn(t, 'updated_at').notNullable();
    t.index(['business_id']);
  });
  await knex.schema.createTable('oauth_grants', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.integer('business_id').unsigned().notNullable().references('id').inTable('businesses');
    t.boolean('livemode').notNullable();
    t.integer('app_id').unsigned().notNullable().references('id').inTable('oauth_apps');
    t.integer('owner_id').unsigned().notNullable().references('id').inTable('business_owners');
    t.text('scopes').notNullable();
    timestampColumn(t, 'revoked_at').nullable();
    timestampColumn(t, 'created_at').notNullable();
    timestampColumn(t, 'updated_at').notNullable();
    t.index(['business_id', 'livemode', 'id']);
    t.index(['app_id']);
  });
  await knex.schema.createTable('oauth_tokens', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.integer('grant_id').unsigned().notNullable().references('id').inTable('oauth_grants');
    // code | access | refresh
    t.string('kind', 16).notNullable();
    t.string('token_hash', 64).notNullable().unique();
    // A code's PKCE challenge and redirect URI, which the exchange must match.
    t.string('code_challenge', 128).nullable();
    t.string('redirect_uri', 2048).nullable();
    timestampColumn(t, 'expires_at').notNullable();
    // A code or refresh token is used once; presented again, it revokes the grant.
    timestampColumn(t, 'used_at').nullable();
    timestampColumn(t, 'created_at').notNullable();
    timestampColumn(t, 'updated_at').notNullable();
    t.index(['grant_id', 'kind']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('oauth_tokens');
  await knex.schema.dropTable('oauth_grants');
  await knex.schema.dropTable('business_owners');
  await knex.schema.dropTable('oauth_apps');
}
