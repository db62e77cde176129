import { Knex } from 'knex';

/**
 * A delivery goes to a key's webhook URL or to an OAuth app's: `api_key_id` becomes optional and
 * `app_id` names the app. Existing rows are all key deliveries.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.integer('api_key_id').unsigned().nullable().alter();
    t.integer('app_id').unsigned().nullable().references('id').inTable('oauth_apps');
    t.index(['app_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex('webhook_deliveries').whereNotNull('app_id').delete();
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.dropForeign(['app_id']);
    t.dropIndex(['app_id', 'id']);
    t.dropColumn('app_id');
  });
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.integer('api_key_id').unsigned().notNullable().alter();
  });
}
