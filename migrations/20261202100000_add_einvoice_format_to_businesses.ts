import { Knex } from 'knex';

/** The e-invoice a business's invoice e-mails carry (`ubl`, `cii`, `facturx`, `xrechnung-ubl`, `xrechnung-cii`); null: the plain PDF only. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('businesses', (t) => {
    t.string('einvoice_format', 20).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('businesses', (t) => {
    t.dropColumn('einvoice_format');
  });
}
