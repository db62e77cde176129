import { Knex } from 'knex';
import { migrationContext } from '../server/db/migrate';
import { SealedPlace, SEALED_PREFIX, SecretBox, UNBOUND_PREFIX } from '../server/keys/secret-box';

/**
 * Sealed secrets were bound to their purpose only (`v1`), so a database writer could copy one
 * business's sealed Stripe key or webhook secret into another row and it would open there. They are
 * re-sealed bound to their table, column, row id and business (`v2`, see secret-box.ts). Only
 * values that are sealed are touched (a clear-text value from before sealing never opened and is
 * left as it is). The application key comes from the run's context (`invoicing migrate` and
 * `serve` load it as they always do); a database with nothing to re-seal never needs it.
 */
interface SealedColumn {
  table: string;
  column: string;
  purpose: string;
  /** The column naming the row's business; null for rows of no business (OAuth apps). */
  businessColumn: string | null;
}

const SEALED_COLUMNS: SealedColumn[] = [
  { table: 'api_keys', column: 'webhook_secret', purpose: 'webhook_secret', businessColumn: 'business_id' },
  { table: 'oauth_apps', column: 'webhook_secret_sealed', purpose: 'webhook_secret', businessColumn: null },
  { table: 'payment_gateways', column: 'secret_key_sealed', purpose: 'gateway_secret', businessColumn: 'business_id' },
  { table: 'payment_gateways', column: 'webhook_secret_sealed', purpose: 'gateway_secret', businessColumn: 'business_id' },
];

/** Rewrites every value of `from`'s version in each sealed column with `reseal`; a row changed meanwhile is left to its writer. */
async function resealAll(knex: Knex, from: string, reseal: (box: SecretBox, sealed: string, place: SealedPlace) => string): Promise<void> {
  for (const { table, column, purpose, businessColumn } of SEALED_COLUMNS) {
    const rows = await knex<Record<string, string | number | null>>(table)
      .select(['id', column, ...(businessColumn ? [businessColumn] : [])])
      .where(column, 'like', `${from}%`);
    if (!rows.length) continue;
    const box = new SecretBox(migrationContext().appKey(), purpose);
    for (const row of rows) {
      const sealed = String(row[column]);
      const place: SealedPlace = { table, column, id: Number(row.id), businessId: businessColumn ? Number(row[businessColumn]) : null };
      await knex(table)
        .where({ id: row.id, [column]: sealed })
        .update({ [column]: reseal(box, sealed, place) });
    }
  }
}

export async function up(knex: Knex): Promise<void> {
  await resealAll(knex, UNBOUND_PREFIX, (box, sealed, place) => box.seal(box.openUnbound(sealed), place));
}

export async function down(knex: Knex): Promise<void> {
  await resealAll(knex, SEALED_PREFIX, (box, sealed, place) => box.sealUnbound(box.open(sealed, place)));
}
