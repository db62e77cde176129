/** The one place a bearer token becomes a credential: an API key, or an OAuth access token of a live grant. */
import { KeyService } from '../keys/service';
import { looksLikeAccessToken, OAuthTokens } from '../oauth/tokens';
import { Credential } from './credential';

export class Credentials {
  constructor(
    private readonly keys: KeyService,
    private readonly tokens: OAuthTokens,
  ) {}

  resolve(bearer: string): Promise<Credential | null> {
    return looksLikeAccessToken(bearer) ? this.tokens.authenticate(bearer) : this.keys.authenticate(bearer);
  }
}
