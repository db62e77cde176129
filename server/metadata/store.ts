/**
 * An object's metadata is kept twice, written together in the object's transaction: as JSON text on
 * the object's row (read with it, so views stay pure), and as `metadata_entries` rows, the index
 * behind `?metadata[key]=value`. Only this module writes either.
 */
import { Knex } from 'knex';
import { QueryBuilder } from 'objection';
import { Actor } from '../auth/actor';
import { TenantModel } from '../db/tenant-model';
import { ValidationFailed } from '../errors';
import { MetadataEntry, MetadataOwner } from './model';
import { MAX_METADATA_KEYS, Metadata, MetadataChanges } from './schema';

/** A new object's metadata: keys given "" or null are simply not set. */
export function initialMetadata(changes: MetadataChanges | undefined): Metadata {
  return mergedMetadata({}, changes);
}

/** An update's metadata: `changes` merged into `current`, "" or null removing a key. */
export function mergedMetadata(current: Metadata | null | undefined, changes: MetadataChanges | undefined): Metadata {
  const merged = new Map(Object.entries(current ?? {}));
  for (const [key, value] of Object.entries(changes ?? {})) {
    if (value === null || value === '') merged.delete(key);
    else merged.set(key, value);
  }
  if (merged.size > MAX_METADATA_KEYS) {
    throw new ValidationFailed({ metadata: [`metadata has at most ${MAX_METADATA_KEYS} keys; with these changes it would have ${merged.size}`] });
  }
  return Object.fromEntries(merged);
}

/**
 * Writes the index rows of an object's metadata, in the transaction that writes the object's row.
 * `replace`: the object had metadata before, whose rows go first.
 */
export async function indexMetadata(
  trx: Knex.Transaction,
  actor: Actor,
  owner: { type: MetadataOwner; id: number },
  metadata: Metadata,
  { replace }: { replace: boolean },
): Promise<void> {
  if (replace) await dropMetadataIndex(trx, actor, owner);
  const rows = Object.entries(metadata).map(([key, value]) => ({ object_type: owner.type, object_id: owner.id, key, value }));
  await MetadataEntry.insertAll(actor, trx, rows);
}

/** Merges `changes` into the metadata of a row the caller read (and locked) in `trx`: the row's copy and the index. */
export async function updateMetadata(
  trx: Knex.Transaction,
  actor: Actor,
  type: MetadataOwner,
  row: TenantModel & { metadata: Metadata | null },
  changes: MetadataChanges,
): Promise<void> {
  const metadata = mergedMetadata(row.metadata, changes);
  await row.$query(trx).patch({ metadata } as Partial<TenantModel>);
  await indexMetadata(trx, actor, { type, id: row.id }, metadata, { replace: true });
}

/** Removes an object's index rows (the object is being deleted). */
export async function dropMetadataIndex(trx: Knex.Transaction, actor: Actor, owner: { type: MetadataOwner; id: number }): Promise<void> {
  await MetadataEntry.of(actor, trx).where({ object_type: owner.type, object_id: owner.id }).delete();
}

/** Restricts a list to the objects that have every pair of `filter`: one index lookup per pair. */
export function whereMetadata<M extends TenantModel>(
  query: QueryBuilder<M, M[]>,
  actor: Actor,
  conn: Knex,
  type: MetadataOwner,
  filter: Metadata | undefined,
): void {
  const table = (query.modelClass() as unknown as typeof TenantModel).tableName;
  for (const [key, value] of Object.entries(filter ?? {})) {
    query.whereIn(`${table}.id`, MetadataEntry.of(actor, conn).select('object_id').where({ object_type: type, key, value }));
  }
}
