import { Knex } from 'knex';

/**
 * A refund asked for with an Idempotency-Key carries it (with the credential's subject): a retry of
 * a request whose process died resumes that refund (the gateway call replays under the refund's
 * own idempotency key) instead of making a second one.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('refunds', (t) => {
    t.string('request_key', 400).nullable();
    t.unique(['request_key']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('refunds', (t) => {
    t.dropUnique(['request_key']);
    t.dropColumn('request_key');
  });
}
