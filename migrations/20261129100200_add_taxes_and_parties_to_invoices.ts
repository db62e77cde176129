import { Knex } from 'knex';
import { dropColumnsInPlace } from './schema-helpers';

/**
 * Taxes and both parties on invoices. Amounts stay integers in minor units; the rate ids, the
 * breakdown and the two parties' snapshots are JSON text, read with the row (as metadata is).
 * Existing invoices had no tax: their total is their subtotal, excluding tax, and each line's
 * amount is its amount excluding tax. Existing issued invoices take their seller and buyer
 * snapshot from the business and the client as they are now (the contract's rule at upgrade).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('invoices', (t) => {
    t.bigInteger('total_excluding_tax').notNullable().defaultTo(0);
    t.bigInteger('total_tax').notNullable().defaultTo(0);
    t.bigInteger('rounding_amount').notNullable().defaultTo(0);
    // The caller's rounding_amount, kept apart from the computed one so a re-priced draft adds it again.
    t.bigInteger('caller_rounding_amount').notNullable().defaultTo(0);
    // What the totals were computed with, and what the caller asked for (null: the client's).
    t.string('tax_exempt', 10).notNullable().defaultTo('none');
    t.string('requested_tax_exempt', 10).nullable();
    t.text('default_tax_rate_ids').nullable();
    t.text('tax_breakdown').nullable();
    t.string('buyer_reference', 255).nullable();
    t.string('purchase_order', 255).nullable();
    t.text('seller').nullable();
    t.text('buyer').nullable();
  });
  await knex('invoices').update({ total_excluding_tax: knex.ref('subtotal') });

  await knex.schema.alterTable('invoice_items', (t) => {
    t.bigInteger('amount_excluding_tax').notNullable().defaultTo(0);
    // The ids the item gave (null: it gave none, and the invoice's defaults apply).
    t.text('tax_rate_ids').nullable();
    t.text('tax_amounts').nullable();
  });
  await knex('invoice_items').update({ amount_excluding_tax: knex.ref('amount') });

  await snapshotIssuedInvoices(knex);
}

const SELLER_COLUMNS = [
  'address_line1',
  'address_line2',
  'city',
  'postal_code',
  'state',
  'country',
  'tax_id',
  'registration_number',
  'email',
  'phone',
  'iban',
  'bic',
  'invoice_footer',
  'peppol_id',
] as const;
const BUYER_COLUMNS = ['company', 'email', 'address', 'city', 'postal_code', 'state', 'country', 'tax_id', 'buyer_reference', 'peppol_id'] as const;

/** Every issued invoice's seller and buyer as the business and the client read now. */
async function snapshotIssuedInvoices(knex: Knex): Promise<void> {
  const businesses = new Map<number, Record<string, unknown>>();
  for (const business of (await knex('businesses').select('*')) as Record<string, unknown>[]) {
    const seller: Record<string, unknown> = { legal_name: business.legal_name ?? business.name };
    for (const column of SELLER_COLUMNS) seller[column] = business[column] ?? null;
    businesses.set(Number(business.id), seller);
  }
  const issued: { id: number; business_id: number; client_id: number }[] = await knex('invoices').whereNot('status', 'draft').select('id', 'business_id', 'client_id');
  const clients = new Map<number, Record<string, unknown>>();
  for (let i = 0; i < issued.length; i += 500) {
    const batch = issued.slice(i, i + 500);
    const ids = [...new Set(batch.map((row) => row.client_id))].filter((id) => !clients.has(id));
    for (const client of (await knex('clients').whereIn('id', ids).select('*')) as Record<string, unknown>[]) {
      const buyer: Record<string, unknown> = { name: client.name };
      for (const column of BUYER_COLUMNS) buyer[column] = client[column] ?? null;
      buyer.tax_exempt = client.tax_exempt ?? 'none';
      clients.set(Number(client.id), buyer);
    }
    for (const row of batch) {
      await knex('invoices')
        .where('id', row.id)
        .update({ seller: JSON.stringify(businesses.get(Number(row.business_id))), buyer: JSON.stringify(clients.get(Number(row.client_id))) });
    }
  }
}

const INVOICE_COLUMNS = [
  'total_excluding_tax',
  'total_tax',
  'rounding_amount',
  'caller_rounding_amount',
  'tax_exempt',
  'requested_tax_exempt',
  'default_tax_rate_ids',
  'tax_breakdown',
  'buyer_reference',
  'purchase_order',
  'seller',
  'buyer',
];
const ITEM_COLUMNS = ['amount_excluding_tax', 'tax_rate_ids', 'tax_amounts'];

export async function down(knex: Knex): Promise<void> {
  await dropColumnsInPlace(knex, 'invoice_items', ITEM_COLUMNS);
  await dropColumnsInPlace(knex, 'invoices', INVOICE_COLUMNS);
}
