import { Knex } from 'knex';

/**
 * Only a gateway's own payment id must be unique (one payment per Stripe PaymentIntent); the
 * reference of a payment received elsewhere (a bank transfer's) may repeat. `unique_reference` is
 * set for gateway payments only, and the unique index moves onto it (NULLs never collide).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('payments', (t) => {
    t.string('unique_reference', 255).nullable();
  });
  await knex('payments').where('gateway', 'stripe').update({ unique_reference: knex.ref('gateway_reference') });
  await knex.schema.alterTable('payments', (t) => {
    t.dropUnique(['gateway', 'gateway_reference']);
    t.unique(['gateway', 'unique_reference']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('payments', (t) => {
    t.dropUnique(['gateway', 'unique_reference']);
  });
  await knex.schema.alterTable('payments', (t) => {
    t.dropColumn('unique_reference');
    t.unique(['gateway', 'gateway_reference']);
  });
}
