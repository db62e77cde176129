/** Who is calling: the business, the mode and the scopes, whatever kind of token proved it. */
import { Scope } from './scopes';

export interface Credential {
  kind: 'api_key' | 'oauth_token';
  /** Id of the API key, or of the OAuth grant a token belongs to. */
  id: number;
  businessId: number;
  livemode: boolean;
  scopes: readonly Scope[];
  /** For an OAuth token: the app it was issued to (its webhook deliveries are the token's to read). */
  appId?: number;
  /** Identity for rate limits and idempotency keys: one per key, or per grant for OAuth tokens. */
  subject: string;
}

/** The tenancy of a record: its business and mode. A credential is one; so is a record found by its link token. */
export type Tenancy = Pick<Credential, 'businessId' | 'livemode'>;

/**
 * Turns a bearer token into its credential, or null when it proves nothing: what the HTTP guard
 * needs. Implemented by server/oauth/credentials.ts, above the keys and the OAuth tokens it asks.
 */
export interface CredentialLookup {
  resolve(bearer: string): Promise<Credential | null>;
}
