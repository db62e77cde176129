import { Knex } from 'knex';
import { binary, isMysql } from './schema-helpers';

/**
 * An e-mail of 254 characters can lower-case to 508 (İ becomes i̇, two code points), so the
 * normalised copy gets twice the room. 508 utf8mb4 characters take 2032 bytes of the unique
 * index, within InnoDB's 3072. SQLite does not enforce declared lengths: nothing to change there.
 */
export async function up(knex: Knex): Promise<void> {
  if (!isMysql(knex)) return;
  await knex.schema.alterTable('clients', (t) => {
    binary(knex, t.string('email_normalized', 508)).notNullable().alter();
  });
}

export async function down(knex: Knex): Promise<void> {
  if (!isMysql(knex)) return;
  await knex.schema.alterTable('clients', (t) => {
    binary(knex, t.string('email_normalized', 254)).notNullable().alter();
  });
}
