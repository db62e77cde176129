import { Knex } from 'knex';
import { timestampColumn } from './schema-helpers';

/**
 * When the server last read each checkout session from the gateway for a client returning to the
 * payment page: anyone holding the link and a session id could otherwise make it call the gateway
 * on every reload. Kept on the row so that the limit holds across server processes.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('checkout_sessions', (t) => {
    timestampColumn(t, 'last_read_at').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('checkout_sessions', (t) => {
    t.dropColumn('last_read_at');
  });
}
