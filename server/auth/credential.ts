/** Who is calling: the business, the mode and the scopes, whatever kind of token proved it. */
import { Scope } from './scopes';

export interface Credential {
  kind: 'api_key' | 'oauth_token';
  /** Id of the API key, or of the OAuth grant a token belongs to. */
  id: number;
  businessId: number;
  livemode: boolean;
  scopes: readonly Scope[];
  /** Identity for rate limits and idempotency keys: one per key or token. */
  subject: string;
}

/** The tenancy of a record: its business and mode. A credential is one; so is a record found by its link token. */
export type Tenancy = Pick<Credential, 'businessId' | 'livemode'>;
