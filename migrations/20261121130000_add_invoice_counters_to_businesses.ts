import { Knex } from 'knex';

/**
 * The last invoice number issued, per mode, on the business row itself: the row always exists, so
 * issuing a number is one UPDATE that locks it (gapless, no insert race, no gap-lock deadlock).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('businesses', (t) => {
    t.integer('last_invoice_number_live').unsigned().notNullable().defaultTo(0);
    t.integer('last_invoice_number_test').unsigned().notNullable().defaultTo(0);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('businesses', (t) => {
    t.dropColumn('last_invoice_number_live');
    t.dropColumn('last_invoice_number_test');
  });
}
