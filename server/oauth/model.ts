import { Knex } from 'knex';
import { Scope } from '../auth/scopes';
import { BaseModel } from '../db/base-model';
import { ChildModel, TenantModel } from '../db/tenant-model';

/** A platform's OAuth app: no tenant of its own; it acts for the businesses that authorize it. */
export class OAuthApp extends BaseModel {
  static override tableName = 'oauth_apps';
  static override timestampColumns = [...BaseModel.timestampColumns, 'revoked_at'];

  name!: string;
  client_id!: string;
  /** SHA-256 of the client secret; null for a public app. */
  client_secret_hash!: string | null;
  /** JSON array of the exact redirect URIs. */
  redirect_uris!: string;
  webhook_url!: string | null;
  webhook_secret_sealed!: string | null;
  revoked_at!: string | null;
}

/** What an owner authorized: an app acting for one business and mode with these scopes. */
export class OAuthGrant extends TenantModel {
  static override tableName = 'oauth_grants';
  static override timestampColumns = [...BaseModel.timestampColumns, 'revoked_at'];

  app_id!: number;
  owner_id!: number;
  /** JSON array of scopes. */
  scopes!: string;
  revoked_at!: string | null;

  scopeList(): Scope[] {
    return JSON.parse(this.scopes) as Scope[];
  }
}

export const TOKEN_KINDS = ['code', 'access', 'refresh'] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

/** A code, access token or refresh token of a grant, known by its hash; reached through its grant. */
export class OAuthToken extends ChildModel {
  static override tableName = 'oauth_tokens';
  static override timestampColumns = [...BaseModel.timestampColumns, 'expires_at', 'used_at'];
  static override parentColumn = 'grant_id';

  static ofGrants(grants: readonly OAuthGrant[], conn: Knex) {
    return OAuthToken.ofParents(grants, conn);
  }

  /** The grant a presented code or token belongs to, as a subquery: the token's hash is the capability. */
  static tokenOwners(conn: Knex, kind: TokenKind, tokenHash: string): Knex.QueryBuilder {
    return conn(OAuthToken.tableName).select('grant_id').where({ kind, token_hash: tokenHash });
  }

  grant_id!: number;
  kind!: TokenKind;
  token_hash!: string;
  /** JSON array of the scopes this code or token was issued for (RFC 6749 §6: a refresh may narrow its access token). */
  scopes!: string;
  code_challenge!: string | null;
  redirect_uri!: string | null;
  expires_at!: string;
  used_at!: string | null;

  scopeList(): Scope[] {
    return JSON.parse(this.scopes) as Scope[];
  }
}
