import { BaseModel } from '../db/base-model';

export class ApiKey extends BaseModel {
  static override tableName = 'api_keys';
  static override timestampColumns = ['created_at', 'updated_at', 'revoked_at', 'expires_at'];
  static override booleanColumns = ['livemode'];

  business_id!: number;
  livemode!: boolean;
  key_hash!: string;
  prefix!: string;
  last4!: string;
  /** JSON array of scope names. */
  scopes!: string;
  webhook_url!: string | null;
  webhook_secret!: string | null;
  revoked_at!: string | null;
  /** Set on a key rotated with a grace period: it stops authenticating at this time. */
  expires_at!: string | null;
}
