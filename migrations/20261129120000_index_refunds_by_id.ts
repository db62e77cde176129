import { Knex } from 'knex';

/**
 * Refunds get the (business_id, livemode, id) index every listed tenant table has: a list pages
 * through it in id order, and counts its matches through it (db/statement's countStatement).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('refunds', (t) => {
    t.index(['business_id', 'livemode', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('refunds', (t) => {
    t.dropIndex(['business_id', 'livemode', 'id']);
  });
}
