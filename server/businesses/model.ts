import { BaseModel } from '../db/base-model';

export class Business extends BaseModel {
  static override tableName = 'businesses';

  name!: string;
  currency!: string;
  country!: string | null;
  plan!: string;
  /** Space-separated origins that may frame the embeddable signing page; null: any. */
  embed_origins!: string | null;
}
