import { Knex } from 'knex';
import { dropColumnsInPlace, tableDefaults, timestampColumn } from './schema-helpers';

/**
 * Recurring invoices: a schedule that issues one invoice of the same lines to one client on each of
 * its dates (server/recurring-invoices/). `next_issue_date` is the one date still to issue (null once
 * the schedule has ended); the sweep claims it with a conditional update, and the invoice it issues
 * names its schedule (`invoices.recurring_invoice_id`), unique with its issue date, so that one date
 * is issued once even by several processes.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('recurring_invoices', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.integer('business_id').unsigned().notNullable().references('id').inTable('businesses');
    t.boolean('livemode').notNullable();
    // A foreign key: a client with a schedule cannot be deleted (422 invalid_state), as one with invoices.
    t.integer('client_id').unsigned().notNullable().references('id').inTable('clients');
    t.string('currency', 3).notNullable();
    // The lines as each invoice takes them, unit prices in minor units (JSON text).
    t.text('items').notNullable();
    t.text('default_tax_rate_ids').notNullable();
    t.string('interval_unit', 10).notNullable();
    t.integer('interval_count').unsigned().notNullable();
    t.string('start_date', 10).notNullable();
    t.string('end_date', 10).nullable();
    t.integer('days_until_due').unsigned().notNullable();
    t.boolean('auto_send').notNullable();
    t.string('status', 10).notNullable();
    t.string('next_issue_date', 10).nullable();
    t.text('metadata').nullable();
    timestampColumn(t, 'created_at').notNullable();
    timestampColumn(t, 'updated_at').notNullable();
    t.index(['business_id', 'livemode', 'id']);
    t.index(['business_id', 'livemode', 'created_at']);
    t.index(['business_id', 'livemode', 'client_id', 'id']);
    // The sweep: active schedules by the date they are due, across businesses and within one.
    t.index(['status', 'next_issue_date'], 'recurring_invoices_due');
    t.index(['business_id', 'livemode', 'status', 'next_issue_date'], 'recurring_invoices_due_by_tenant');
  });
  await knex.schema.alterTable('invoices', (t) => {
    // No foreign key: SQLite cannot drop a column that one names (see down).
    t.integer('recurring_invoice_id').unsigned().nullable();
    // One invoice per schedule and date; invoices of no schedule (null) are not compared.
    t.unique(['recurring_invoice_id', 'issue_date'], { indexName: 'invoices_recurring_date' });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('invoices', (t) => {
    t.dropUnique(['recurring_invoice_id', 'issue_date'], 'invoices_recurring_date');
  });
  await dropColumnsInPlace(knex, 'invoices', ['recurring_invoice_id']);
  await knex.schema.dropTable('recurring_invoices');
}
