/** An API key as the CLI shows it: never its value or its webhook secret, except the once it is made. Pure. */
import { Scope } from '../auth/scopes';
import { ApiKey } from './model';
import { Mode } from './token';

/**
 * `active`; `expiring`: rotated, working until `expires_at`; `expired`: past it; `revoked`.
 */
export type KeyStatus = 'active' | 'expiring' | 'expired' | 'revoked';

export interface KeyView {
  id: number;
  business_id: number;
  mode: Mode;
  livemode: boolean;
  scopes: Scope[];
  prefix: string;
  last4: string;
  webhook_url: string | null;
  webhook_secret_set: boolean;
  status: KeyStatus;
  created_at: string;
  revoked_at: string | null;
  expires_at: string | null;
}

/** A key that `update` changed: a generated webhook secret is shown this once. */
export interface UpdatedKey extends KeyView {
  webhook_secret?: string;
}

/** A new key: the only time its value (and a generated webhook secret) is ever returned. */
export interface CreatedKey extends KeyView {
  key: string;
  webhook_secret: string | null;
}

export function keyStatus(row: ApiKey, now: Date): KeyStatus {
  if (row.revoked_at) return 'revoked';
  if (!row.expires_at) return 'active';
  return Date.parse(row.expires_at) > now.getTime() ? 'expiring' : 'expired';
}

export function toKeyView(row: ApiKey, now: Date): KeyView {
  return {
    id: row.id,
    business_id: row.business_id,
    mode: row.livemode ? 'live' : 'test',
    livemode: row.livemode,
    scopes: JSON.parse(row.scopes) as Scope[],
    prefix: row.prefix,
    last4: row.last4,
    webhook_url: row.webhook_url,
    webhook_secret_set: row.webhook_secret !== null,
    status: keyStatus(row, now),
    created_at: row.created_at,
    revoked_at: row.revoked_at,
    expires_at: row.expires_at,
  };
}
