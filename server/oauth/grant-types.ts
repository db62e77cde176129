/**
 * The two grants of `POST /oauth/token`, in place of @node-oauth/oauth2-server's own: those consume
 * a code before checking its PKCE verifier and redirect URI (so a stolen code presented with a
 * wrong verifier burned it, and the rightful app's exchange then revoked the grant), and a refresh
 * token before checking the scope asked. Here everything is checked first; a failed check leaves the
 * code or token usable by its holder, and only a code or token already used, presented with
 * everything else right, revokes the grant.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import OAuth2Server, { AbstractGrantType, InvalidGrantError, InvalidRequestError, InvalidScopeError } from '@node-oauth/oauth2-server';
import { OAuthTokens, Presented } from './tokens';

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

function parameter(request: OAuth2Server.Request, name: string): string {
  const value = (request.body as Record<string, unknown>)[name];
  if (typeof value !== 'string' || !value) throw new InvalidRequestError(`Missing parameter: \`${name}\``);
  return value;
}

/** The presented code or token of this client, unexpired; the same answer for one unknown and one of another client (RFC 6749 §5.2). */
async function presentedBy(tokens: OAuthTokens, kind: 'code' | 'refresh', value: string, client: OAuth2Server.Client): Promise<Presented> {
  const found = await tokens.presented(kind, value);
  const what = kind === 'code' ? 'authorization code' : 'refresh token';
  if (!found || String(found.grant.app_id) !== client.id) throw new InvalidGrantError(`Invalid grant: ${what} is invalid`);
  if (Date.parse(found.token.expires_at) <= tokens.clock.now().getTime()) throw new InvalidGrantError(`Invalid grant: ${what} has expired`);
  return found;
}

/**
 * A code or refresh token presented again by a client that passed every other check revokes its
 * grant (RFC 6749 §4.1.2, §10.4): one of the two uses was not the app's. A code's reuse counts only
 * with its PKCE verifier, so a code leaked after its exchange (a log, a history) cannot end the grant.
 */
async function refuseReuse(tokens: OAuthTokens, presented: Presented, what: string): Promise<void> {
  if (!presented.token.used_at) return;
  await tokens.revokeGrant(presented.grant);
  throw new InvalidGrantError(`Invalid grant: ${what} was already used; the grant is revoked`);
}

/**
 * RFC 6749 §4.1.3: the redirect URI the authorization request named must be repeated, identical
 * (another, even a registered one, is invalid_grant, §5.2); one that named none needs none, and one
 * given anyway must be the app's.
 */
function verifyRedirectUri(request: OAuth2Server.Request, named: string | null, client: OAuth2Server.Client): void {
  const given = (request.body as Record<string, unknown>).redirect_uri;
  if (named !== null && (typeof given !== 'string' || !given)) throw new InvalidRequestError('Missing parameter: `redirect_uri`');
  if (given === undefined) return;
  const expected = named === null ? [client.redirectUris].flat() : [named];
  if (!expected.includes(given as string)) throw new InvalidGrantError('Invalid grant: `redirect_uri` differs from the authorization request\'s');
}

/** RFC 7636 §4.6: the verifier's S256 against the stored challenge, in constant time; a code issued without a challenge takes no verifier. */
function verifyPkce(request: OAuth2Server.Request, challenge: string | null): void {
  const verifier = (request.body as Record<string, unknown>).code_verifier;
  if (challenge === null) {
    if (verifier !== undefined) throw new InvalidGrantError('Invalid grant: code verifier is invalid');
    return;
  }
  if (typeof verifier !== 'string' || !verifier) throw new InvalidGrantError('Invalid grant: missing `code_verifier`');
  if (!CODE_VERIFIER.test(verifier)) throw new InvalidRequestError('Invalid parameter: `code_verifier`');
  const computed = Buffer.from(createHash('sha256').update(verifier).digest('base64url'));
  const stored = Buffer.from(challenge);
  if (computed.length !== stored.length || !timingSafeEqual(computed, stored)) throw new InvalidGrantError('Invalid grant: code verifier is invalid');
}

export function grantTypes(tokens: OAuthTokens): Record<'authorization_code' | 'refresh_token', typeof AbstractGrantType> {
  class AuthorizationCodeGrant extends AbstractGrantType {
    async handle(request: OAuth2Server.Request, client: OAuth2Server.Client): Promise<OAuth2Server.Token> {
      const code = await presentedBy(tokens, 'code', parameter(request, 'code'), client);
      verifyRedirectUri(request, code.token.redirect_uri, client);
      verifyPkce(request, code.token.code_challenge);
      await refuseReuse(tokens, code, 'authorization code');
      const scopes = code.token.scopeList();
      return issued(await tokens.redeem(code, { access: scopes, refresh: scopes }), client, 'authorization code');
    }
  }

  class RefreshTokenGrant extends AbstractGrantType {
    async handle(request: OAuth2Server.Request, client: OAuth2Server.Client): Promise<OAuth2Server.Token> {
      const refresh = await presentedBy(tokens, 'refresh', parameter(request, 'refresh_token'), client);
      await refuseReuse(tokens, refresh, 'refresh token');
      const held = refresh.token.scopeList();
      const asked = this.getScope(request) as string[] | undefined;
      const beyond = (asked ?? []).filter((scope) => !(held as string[]).includes(scope));
      if (beyond.length) throw new InvalidScopeError(`Invalid scope: not granted: ${beyond.join(' ')}`);
      // RFC 6749 §6: the access token may be narrower; the new refresh token has exactly the presented one's scopes.
      const access = asked ? held.filter((scope) => asked.includes(scope)) : held;
      return issued(await tokens.redeem(refresh, { access, refresh: held }), client, 'refresh token');
    }
  }

  return { authorization_code: AuthorizationCodeGrant, refresh_token: RefreshTokenGrant };
}

/** The library's token: `client` and `user` are its own fields; the rest become the response (extended attributes). */
function issued(tokens: Awaited<ReturnType<OAuthTokens['redeem']>>, client: OAuth2Server.Client, what: string): OAuth2Server.Token {
  if (!tokens) throw new InvalidGrantError(`Invalid grant: ${what} was already used; the grant is revoked`);
  return { ...tokens, client, user: { businessId: tokens.business_id } };
}
