import { Knex } from 'knex';

/**
 * `attempts` counts the attempts of the current retry schedule and a replay starts it again; the
 * attempt number in `x-service-delivery` must never repeat, so it gets a counter of its own. Existing
 * rows start from the highest number already used, recorded or under way.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.integer('last_attempt_number').unsigned().notNullable().defaultTo(0);
  });
  await knex('webhook_deliveries').update({
    last_attempt_number: knex.raw(
      'coalesce((select max(webhook_attempts.attempt) from webhook_attempts where webhook_attempts.delivery_id = webhook_deliveries.id), 0)',
    ),
  });
  await knex('webhook_deliveries').where('attempts', '>', knex.ref('last_attempt_number')).update({ last_attempt_number: knex.ref('attempts') });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.dropColumn('last_attempt_number');
  });
}
