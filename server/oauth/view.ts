/** OAuth apps and grants as the CLI shows them: never a secret, except the once it is made. Pure. */
import { Scope } from '../auth/scopes';
import { OAuthApp, OAuthGrant } from './model';

export interface AppView {
  id: number;
  name: string;
  client_id: string;
  public: boolean;
  redirect_uris: string[];
  webhook_url: string | null;
  revoked_at: string | null;
  created_at: string;
}

export interface CreatedApp extends AppView {
  /** Shown once; null for a public app. */
  client_secret: string | null;
  /** Shown once, when the app has a webhook URL. */
  webhook_secret: string | null;
}

export interface GrantView {
  id: number;
  app_id: number;
  app_name: string;
  business_id: number;
  livemode: boolean;
  scopes: Scope[];
  owner_id: number;
  revoked_at: string | null;
  created_at: string;
}

export const toAppView = (row: OAuthApp): AppView => ({
  id: row.id,
  name: row.name,
  client_id: row.client_id,
  public: row.client_secret_hash === null,
  redirect_uris: JSON.parse(row.redirect_uris) as string[],
  webhook_url: row.webhook_url,
  revoked_at: row.revoked_at,
  created_at: row.created_at,
});

export function toGrantView(grant: OAuthGrant, appName: string): GrantView {
  return {
    id: grant.id,
    app_id: grant.app_id,
    app_name: appName,
    business_id: grant.business_id,
    livemode: grant.livemode,
    scopes: grant.scopeList(),
    owner_id: grant.owner_id,
    revoked_at: grant.revoked_at,
    created_at: grant.created_at,
  };
}
