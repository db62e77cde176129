import { BaseModel } from '../db/base-model';

/** A person who signs in to approve OAuth apps for one business. */
export class BusinessOwner extends BaseModel {
  static override tableName = 'business_owners';

  business_id!: number;
  email!: string;
  email_normalized!: string;
  password_hash!: string;
}
