import { Knex } from 'knex';
import { binary, dropColumnsInPlace } from './schema-helpers';

/**
 * Expenses imported from received e-invoices (POST /expenses/import): the document's tax total, the
 * seller's VAT identifier and the invoice number, all null for other expenses; and the document's
 * identity (a SHA-256 of seller and number, hex), unique per business and mode, so one document is
 * one expense even when two imports of it race. Null keys do not collide on either database.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('expenses', (t) => {
    // Minor units of `currency`.
    t.bigInteger('tax_amount').nullable();
    t.string('vendor_tax_id', 100).nullable();
    t.string('document_number', 255).nullable();
    binary(knex, t.string('document_key', 64).nullable());
    t.unique(['business_id', 'livemode', 'document_key'], { indexName: 'expenses_document_key_unique' });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('expenses', (t) => {
    t.dropUnique(['business_id', 'livemode', 'document_key'], 'expenses_document_key_unique');
  });
  await dropColumnsInPlace(knex, 'expenses', ['tax_amount', 'vendor_tax_id', 'document_number', 'document_key']);
}
