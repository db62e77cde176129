import { Knex } from 'knex';

/**
 * Each code and token carries its own scopes (RFC 6749 §6): a refresh may narrow the access token
 * it issues, while the refresh token keeps the scopes it was issued with. Existing codes and tokens
 * were issued for their grant's scopes.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oauth_tokens', (t) => {
    t.text('scopes').nullable();
  });
  await knex('oauth_tokens').update({ scopes: knex('oauth_grants').select('scopes').where('oauth_grants.id', knex.ref('oauth_tokens.grant_id')) });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oauth_tokens', (t) => {
    t.dropColumn('scopes');
  });
}
