import { BaseModel } from '../db/base-model';

/** A person who signs in to approve OAuth apps for one business. */
export class BusinessOwner extends BaseModel {
  static override tableName = 'business_owners';

  business_id!: number;
  email!: string;
  email_normalized!: string;
  password_hash!: string;
}

/** An owner's sign-in on the consent pages, known by its token's SHA-256: ended by signing out or a password reset. */
export class OwnerSession extends BaseModel {
  static override tableName = 'owner_sessions';
  static override timestampColumns = [...BaseModel.timestampColumns, 'expires_at'];

  owner_id!: number;
  token_hash!: string;
  expires_at!: string;
}
