/** The one place a bearer token becomes a credential: an API key, or an OAuth access token of a live grant. */
import { Credential, CredentialLookup } from '../auth/credential';
import { KeyService } from '../keys/service';
import { looksLikeAccessToken, OAuthTokens } from './tokens';

export class Credentials implements CredentialLookup {
  constructor(
    private readonly keys: KeyService,
    private readonly tokens: OAuthTokens,
  ) {}

  resolve(bearer: string): Promise<Credential | null> {
    return looksLikeAccessToken(bearer) ? this.tokens.authenticate(bearer) : this.keys.authenticate(bearer);
  }
}
