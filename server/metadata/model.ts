import { TenantModel } from '../db/tenant-model';

export const METADATA_OWNERS = ['client', 'invoice', 'payment', 'contract', 'tax_rate'] as const;
export type MetadataOwner = (typeof METADATA_OWNERS)[number];

/** One key and value of an object's metadata: the index the list filter looks up. */
export class MetadataEntry extends TenantModel {
  static override tableName = 'metadata_entries';
  static override timestampColumns: string[] = [];

  object_type!: MetadataOwner;
  object_id!: number;
  key!: string;
  value!: string;

  // The entries live and die with their object's metadata: no timestamps of their own.
  override $beforeInsert(): void {}
  override $beforeUpdate(): void {}
}
