import { Knex } from 'knex';
import { timestampColumn } from './schema-helpers';

/** A rotated key may live on for a grace period: it authenticates until `expires_at`, then never again. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_keys', (t) => {
    timestampColumn(t, 'expires_at').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_keys', (t) => {
    t.dropColumn('expires_at');
  });
}
