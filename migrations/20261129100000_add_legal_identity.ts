import { Knex } from 'knex';
import { dropColumnsInPlace } from './schema-helpers';

/**
 * The legal identity of both parties of an invoice: the business (the seller) and its clients (the
 * buyers). Every field is optional; a business without `legal_name` is named by its `name`, a client
 * is `tax_exempt: none` unless set, and a client's existing `address` stays its street lines.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('businesses', (t) => {
    t.string('legal_name', 255).nullable();
    t.string('address_line1', 255).nullable();
    t.string('address_line2', 255).nullable();
    t.string('city', 100).nullable();
    t.string('postal_code', 20).nullable();
    t.string('state', 100).nullable();
    t.string('tax_id', 50).nullable();
    t.string('registration_number', 100).nullable();
    t.string('email', 254).nullable();
    t.string('phone', 50).nullable();
    t.string('iban', 34).nullable();
    t.string('bic', 11).nullable();
    t.string('invoice_footer', 1000).nullable();
    t.string('peppol_id', 140).nullable();
  });
  await knex.schema.alterTable('clients', (t) => {
    t.string('city', 100).nullable();
    t.string('postal_code', 20).nullable();
    t.string('state', 100).nullable();
    t.string('country', 2).nullable();
    t.string('tax_id', 50).nullable();
    t.string('tax_exempt', 10).notNullable().defaultTo('none');
    t.string('buyer_reference', 255).nullable();
    t.string('peppol_id', 140).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await dropColumnsInPlace(knex, 'clients', ['city', 'postal_code', 'state', 'country', 'tax_id', 'tax_exempt', 'buyer_reference', 'peppol_id']);
  await dropColumnsInPlace(knex, 'businesses', [
    'legal_name',
    'address_line1',
    'address_line2',
    'city',
    'postal_code',
    'state',
    'tax_id',
    'registration_number',
    'email',
    'phone',
    'iban',
    'bic',
    'invoice_footer',
    'peppol_id',
  ]);
}
