import { Knex } from 'knex';
import { isMysql, tableDefaults } from './schema-helpers';

/** The objects that carry metadata: each keeps its own copy as JSON text for reading. */
const OWNERS = ['clients', 'invoices', 'payments', 'contracts'];

/**
 * Metadata as Stripe has it: each object keeps its metadata as JSON text (read with the row), and
 * every pair is also a row of `metadata_entries`, whose index answers `?metadata[key]=value` as a
 * lookup (MariaDB cannot index arbitrary JSON keys). Keys and values compare byte for byte, trailing
 * spaces included (MariaDB's `nopad` binary collation; SQLite compares so by default).
 */
export async function up(knex: Knex): Promise<void> {
  for (const table of OWNERS) {
    await knex.schema.alterTable(table, (t) => {
      t.text('metadata').nullable();
    });
  }
  const exact = (column: Knex.ColumnBuilder) => (isMysql(knex) ? column.collate('utf8mb4_nopad_bin') : column);
  await knex.schema.createTable('metadata_entries', (t) => {
    tableDefaults(knex, t);
    t.increments('id');
    t.integer('business_id').unsigned().notNullable().references('id').inTable('businesses');
    t.boolean('livemode').notNullable();
    t.string('object_type', 16).notNullable();
    t.integer('object_id').unsigned().notNullable();
    exact(t.string('key', 40).notNullable());
    exact(t.string('value', 500).notNullable());
    // The filter's lookup: a tenant's objects of one type with this pair.
    t.unique(['business_id', 'livemode', 'object_type', 'key', 'value', 'object_id'], { indexName: 'metadata_entries_lookup' });
    // Rewriting one object's metadata.
    t.index(['object_type', 'object_id'], 'metadata_entries_object');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('metadata_entries');
  for (const table of OWNERS) {
    await knex.schema.alterTable(table, (t) => {
      t.dropColumn('metadata');
    });
  }
}
