import { Knex } from 'knex';
import { tableDefaults, timestampColumn } from './schema-helpers';

/**
 * The clock of a business's test mode, as a Stripe test clock: a `frozen_time` at which the records
 * it writes are dated, standing still until it is moved on. A business and mode without a row run on
 * the real time. Live mode never has one: the check refuses the row, so a live business's time
 * cannot be moved even by a bug in whatever writes these rows (server/db/clocks.ts never reads one).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('business_clocks', (t) => {
    tableDefaults(knex, t);
    t.integer('business_id').unsigned().notNullable().references('id').inTable('businesses');
    t.boolean('livemode').notNullable();
    timestampColumn(t, 'frozen_time').notNullable();
    timestampColumn(t, 'created_at').notNullable();
    timestampColumn(t, 'updated_at').notNullable();
    t.primary(['business_id', 'livemode']);
    t.check('livemode = 0', [], 'business_clocks_test_mode_only');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('business_clocks');
}
