import { Knex } from 'knex';
import { dropColumnsInPlace, tableDefaults, timestampColumn } from './schema-helpers';

/**
 * Credit notes: the numbered documents that correct an issued invoice (a German "Stornorechnung",
 * a French "facture d'avoir"). Each has its own gapless `CN-` series per business and mode, its
 * lines (copied from the invoice's, naming them, or new), their taxes as the one engine computed
 * them, and both parties as the invoice names them. An invoice keeps the sum of its credit notes'
 * totals in `amount_credited`; a refund a credit note made names it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('businesses', (t) => {
    t.integer('last_credit_note_number_live').unsigned().notNullable().defaultTo(0);
    t.integer('last_credit_note_number_test').unsigned().notNullable().defaultTo(0);
  });
  await knex.schema.alterTable('invoices', (t) => {
    t.bigInteger('amount_credited').notNullable().defaultTo(0);
    // Its credit notes' ids, oldest first (JSON text, read with the row): an invoice response shows them without another query.
    t.text('credit_note_ids').nullable();
  });
  await knex.schema.createTable('credit_notes', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.integer('business_id').unsigned().notNullable().references('id').inTable('businesses');
    t.boolean('livemode').notNullable();
    t.string('number', 20).notNullable();
    t.integer('invoice_id').unsigned().notNullable().references('id').inTable('invoices');
    t.integer('client_id').unsigned().notNullable().references('id').inTable('clients');
    t.string('currency', 3).notNullable();
    t.string('reason', 32).nullable();
    t.text('memo').nullable();
    t.bigInteger('subtotal').notNullable();
    t.bigInteger('total_excluding_tax').notNullable();
    t.bigInteger('total_tax').notNullable();
    t.bigInteger('rounding_amount').notNullable();
    t.bigInteger('total').notNullable();
    t.bigInteger('amount_applied').notNullable();
    t.bigInteger('amount_refunded').notNullable();
    t.bigInteger('out_of_band_amount').notNullable();
    t.string('tax_exempt', 10).notNullable();
    t.text('tax_breakdown').notNullable();
    t.text('seller').notNullable();
    t.text('buyer').notNullable();
    t.text('metadata').nullable();
    timestampColumn(t, 'created_at').notNullable();
    timestampColumn(t, 'updated_at').notNullable();
    t.unique(['business_id', 'livemode', 'number']);
    t.index(['business_id', 'livemode', 'id']);
    t.index(['business_id', 'livemode', 'created_at']);
    // The invoice_id and client_id list filters, and an invoice's credit notes.
    t.index(['business_id', 'livemode', 'invoice_id', 'id']);
    t.index(['business_id', 'livemode', 'client_id', 'id']);
  });
  await knex.schema.createTable('credit_note_items', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.integer('credit_note_id').unsigned().notNullable().references('id').inTable('credit_notes');
    t.integer('position').unsigned().notNullable();
    // The invoice line it credits (null: a line of its own); what is left of a line to credit is counted from these.
    t.integer('invoice_item_id').unsigned().nullable().references('id').inTable('invoice_items');
    t.string('description', 1000).notNullable();
    t.bigInteger('quantity_units').notNullable();
    t.bigInteger('unit_price').notNullable();
    t.bigInteger('amount').notNullable();
    t.bigInteger('amount_excluding_tax').notNullable();
    t.text('tax_rate_ids').notNullable();
    t.text('tax_amounts').nullable();
    t.index(['credit_note_id', 'position']);
    t.index(['invoice_item_id']);
  });
  await knex.schema.alterTable('refunds', (t) => {
    // No foreign key: SQLite cannot drop a column that one names (see down), and the credit note
    // that made a refund is written in the refund's own transaction.
    t.integer('credit_note_id').unsigned().nullable();
    t.index(['credit_note_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('refunds', (t) => {
    t.dropIndex(['credit_note_id']);
  });
  await dropColumnsInPlace(knex, 'refunds', ['credit_note_id']);
  await knex.schema.dropTable('credit_note_items');
  await knex.schema.dropTable('credit_notes');
  await dropColumnsInPlace(knex, 'invoices', ['amount_credited', 'credit_note_ids']);
  await dropColumnsInPlace(knex, 'businesses', ['last_credit_note_number_live', 'last_credit_note_number_test']);
}
