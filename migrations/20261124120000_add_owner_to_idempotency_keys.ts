import { Knex } from 'knex';

/**
 * An in-flight Idempotency-Key belongs to the request that claimed it: `owner` is that request's
 * random token, and `updated_at` its lease, renewed while it runs. Only the owner can settle the
 * key, so a claim taken over from a request presumed dead can never commit twice. Claims made
 * before this column existed have no owner; they expire like any other.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('idempotency_keys', (t) => {
    t.string('owner', 36).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('idempotency_keys', (t) => {
    t.dropColumn('owner');
  });
}
