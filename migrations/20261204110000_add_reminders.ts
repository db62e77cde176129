import { Knex } from 'knex';
import { dropColumnsInPlace, tableDefaults, timestampColumn } from './schema-helpers';

/**
 * Payment reminders (server/invoices/reminders.ts):
 * - `businesses.reminder_offsets`: the days relative to the due date on which the client is reminded,
 *   as `business update --reminders` takes them (`-3,1,7`, ascending); null, the default: none.
 *   `reminders_set_at_live` and `reminders_set_at_test` are when they were set, by the clock of each
 *   mode (a test mode's may be frozen): a reminder whose date was before then never goes out, so
 *   setting offsets does not remind of every invoice already under way. Null at the upgrade, as the
 *   offsets are: there is nothing to remind of until a business sets them.
 * - `invoice_reminders`: one row per reminder sent. (invoice_id, offset_days) is unique, so a reminder
 *   is recorded once whatever the number of processes sweeping; it also serves an invoice's
 *   `reminders_sent` and a page's, by invoice id.
 * - `invoices_reminder_sweep` (status, livemode, due_date): the sweep's range, the invoices of a mode
 *   awaiting payment whose due date is up to a cut-off, without reading the paid ones.
 * - `email_messages.attach_invoice`: a reminder e-mail carries the payment link, not the invoice's
 *   files again (the invoice e-mail had them); existing messages are invoice e-mails.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('businesses', (t) => {
    t.string('reminder_offsets', 100).nullable();
    timestampColumn(t, 'reminders_set_at_live').nullable();
    timestampColumn(t, 'reminders_set_at_test').nullable();
  });
  await knex.schema.createTable('invoice_reminders', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.integer('invoice_id').unsigned().notNullable().references('id').inTable('invoices');
    t.integer('business_id').unsigned().notNullable().references('id').inTable('businesses');
    t.boolean('livemode').notNullable();
    t.integer('offset_days').notNullable();
    timestampColumn(t, 'sent_at').notNullable();
    t.unique(['invoice_id', 'offset_days'], { indexName: 'invoice_reminders_once' });
  });
  await knex.schema.alterTable('invoices', (t) => {
    t.index(['status', 'livemode', 'due_date'], 'invoices_reminder_sweep');
  });
  await knex.schema.alterTable('email_messages', (t) => {
    t.boolean('attach_invoice').notNullable().defaultTo(true);
  });
}

export async function down(knex: Knex): Promise<void> {
  await dropColumnsInPlace(knex, 'email_messages', ['attach_invoice']);
  await knex.schema.alterTable('invoices', (t) => {
    t.dropIndex(['status', 'livemode', 'due_date'], 'invoices_reminder_sweep');
  });
  await knex.schema.dropTable('invoice_reminders');
  await dropColumnsInPlace(knex, 'businesses', ['reminder_offsets', 'reminders_set_at_live', 'reminders_set_at_test']);
}
