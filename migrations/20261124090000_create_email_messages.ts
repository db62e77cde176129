import { Knex } from 'knex';
import { binary, tableDefaults, timestampColumn } from './schema-helpers';

/** Invoice e-mails wait here: written with the change that sends them, delivered after its commit, retried on failure. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('email_messages', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.integer('business_id').unsigned().notNullable().references('id').inTable('businesses');
    t.boolean('livemode').notNullable();
    t.integer('invoice_id').unsigned().notNullable().references('id').inTable('invoices');
    t.string('recipient', 254).notNullable();
    t.string('subject', 1000).notNullable();
    t.text('text_body', 'mediumtext').notNullable();
    t.text('html_body', 'mediumtext').notNullable();
    // The same Message-ID on every attempt: a message that got through late is recognised as one.
    t.string('message_id', 255).notNullable();
    t.string('status', 16).notNullable();
    t.integer('attempts').unsigned().notNullable().defaultTo(0);
    timestampColumn(t, 'next_attempt_at').notNullable();
    binary(knex, t.string('lease_id', 32)).nullable();
    t.string('last_error', 500).nullable();
    timestampColumn(t, 'sent_at').nullable();
    timestampColumn(t, 'created_at').notNullable();
    timestampColumn(t, 'updated_at').notNullable();
    t.index(['status', 'next_attempt_at']);
    t.index(['invoice_id']);
    t.index(['business_id', 'livemode', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('email_messages');
}
