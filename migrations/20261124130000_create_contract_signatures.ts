import { Knex } from 'knex';
import { tableDefaults, timestampColumn } from './schema-helpers';

/**
 * One row per party's signature, with the audit record the signing page keeps. The unique
 * (contract, party) index makes each party sign once, whatever races. Businesses get the origins
 * allowed to frame their embeddable signing page.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('contract_signatures', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.integer('contract_id').unsigned().notNullable().references('id').inTable('contracts');
    t.string('party', 16).notNullable();
    t.string('name', 255).notNullable();
    timestampColumn(t, 'signed_at').notNullable();
    t.string('ip_address', 45).nullable();
    t.string('user_agent', 512).nullable();
    t.string('document_sha256', 64).notNullable();
    t.unique(['contract_id', 'party']);
  });
  await knex.schema.alterTable('businesses', (t) => {
    // Space-separated origins (https://shop.example); null: any origin may frame embed_url.
    t.string('embed_origins', 2000).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('businesses', (t) => {
    t.dropColumn('embed_origins');
  });
  await knex.schema.dropTable('contract_signatures');
}
