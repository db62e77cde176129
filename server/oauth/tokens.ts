/**
 * OAuth codes and tokens of grants: issued by the consent page (codes) and by the token endpoint
 * (through @node-oauth/oauth2-server, whose model is `tokenModel()`), resolved into credentials
 * like API keys, revoked (RFC 7009). Every code and token is random and known here only by its
 * SHA-256. A code or refresh token is used once: presented again, it revokes the whole grant.
 */
import OAuth2Server from '@node-oauth/oauth2-server';
import { LRUCache } from 'lru-cache';
import { acrossTenants } from '../auth/actor';
import { Credential } from '../auth/credential';
import { Scope } from '../auth/scopes';
import { Database } from '../db/database';
import { toDbTime } from '../db/time';
import { hashKey, randomBase62, sameHash } from '../keys/token';
import { OAuthApp, OAuthGrant, OAuthToken, TokenKind } from './model';

export const ACCESS_TOKEN_SECONDS = 3600;
export const REFRESH_TOKEN_SECONDS = 90 * 24 * 3600;
export const CODE_SECONDS = 600;

const ACCESS_TOKEN_PATTERN = /^oat_(test|live)_[0-9A-Za-z]{40}$/;

/** The "user" of the OAuth library: the grant a code or token belongs to. */
export interface GrantUser {
  grantId: number;
  businessId: number;
  livemode: boolean;
}

/** What the consent page approved, to be turned into a code. */
export interface Approval {
  appId: number;
  ownerId: number;
  businessId: number;
  livemode: boolean;
  scopes: Scope[];
  redirectUri: string;
  codeChallenge: string | null;
}

export function looksLikeAccessToken(token: string): boolean {
  return ACCESS_TOKEN_PATTERN.test(token);
}

const grantsAccess = acrossTenants('oauth token lookup');

export class OAuthTokens {
  /** Resolved access tokens, kept a few seconds: a revocation reaches every process within `cacheTtlMs`. */
  private readonly cache: LRUCache<string, { credential: Credential } | { credential: null }> | null;

  constructor(
    private readonly db: Database,
    options: { cacheTtlMs: number },
  ) {
    this.cache = options.cacheTtlMs > 0 ? new LRUCache({ max: 10_000, ttl: Math.min(options.cacheTtlMs, 5000) }) : null;
  }

  /**
   * A code for what the owner approved. Re-authorizing an app for the same business and mode
   * updates its grant (so its rate-limit counter and idempotency keys carry on).
   */
  async issueCode(approval: Approval): Promise<string> {
    const code = `oac_${randomBase62(40)}`;
    await this.db.transaction(async (trx) => {
      const tenancy = { business_id: approval.businessId, livemode: approval.livemode };
      const existing = await OAuthGrant.acrossTenants(grantsAccess, trx).where({ ...tenancy, app_id: approval.appId }).whereNull('revoked_at').first().forUpdate();
      const grant = existing
        ? await existing.$query(trx).patchAndFetch({ scopes: JSON.stringify(approval.scopes), owner_id: approval.ownerId })
        : await OAuthGrant.acrossTenants(grantsAccess, trx).insertAndFetch({ ...tenancy, app_id: approval.appId, owner_id: approval.ownerId, scopes: JSON.stringify(approval.scopes), revoked_at: null });
      await OAuthToken.insertAll(grant, trx, [
        {
          kind: 'code',
          token_hash: hashKey(code),
          code_challenge: approval.codeChallenge,
          redirect_uri: approval.redirectUri,
          expires_at: toDbTime(new Date(Date.now() + CODE_SECONDS * 1000)),
          used_at: null,
          created_at: toDbTime(new Date()),
          updated_at: toDbTime(new Date()),
        },
      ]);
    });
    return code;
  }

  /** The credential an access token stands for, or null (unknown, expired, or its grant or app revoked). */
  async authenticate(token: string): Promise<Credential | null> {
    if (!looksLikeAccessToken(token)) return null;
    const hash = hashKey(token);
    const cached = this.cache?.get(hash);
    if (cached) return cached.credential;
    const found = await this.find('access', token);
    const credential: Credential | null =
      found && Date.parse(found.token.expires_at) > Date.now()
        ? {
            kind: 'oauth_token',
            id: found.grant.id,
            businessId: found.grant.business_id,
            livemode: found.grant.livemode,
            scopes: found.grant.scopeList(),
            appId: found.grant.app_id,
            // The grant's: rate limits and Idempotency-Keys carry over refreshed tokens.
            subject: `grant_${found.grant.id}`,
          }
        : null;
    this.cache?.set(hash, { credential });
    return credential;
  }

  /** RFC 7009: an access or refresh token of `clientAppId` stops working; anything else is ignored. */
  async revoke(token: string, clientAppId: number): Promise<void> {
    for (const kind of ['access', 'refresh'] as const) {
      const found = await this.find(kind, token);
      if (!found || found.grant.app_id !== clientAppId) continue;
      await OAuthToken.ofGrants([found.grant], this.db.current).where({ id: found.token.id }).patch({ expires_at: new Date().toISOString() });
      if (kind === 'refresh') await this.revokeGrant(found.grant);
      this.cache?.delete(hashKey(token));
    }
  }

  /** The model @node-oauth/oauth2-server drives for the authorization-code and refresh-token grants. */
  tokenModel(): OAuth2Server.AuthorizationCodeModel & OAuth2Server.RefreshTokenModel {
    return {
      getClient: async (clientId: string, clientSecret: string | undefined) => {
        const app = await OAuthApp.query(this.db.current).findOne({ client_id: clientId });
        if (!app || app.revoked_at) return null;
        const confidential = app.client_secret_hash !== null;
        if (confidential && !(clientSecret && sameHash(app.client_secret_hash!, hashKey(clientSecret)))) return null;
        if (!confidential && clientSecret) return null;
        return { id: String(app.id), grants: ['authorization_code', 'refresh_token'], redirectUris: JSON.parse(app.redirect_uris) as string[] };
      },
      getAuthorizationCode: async (code: string) => {
        const found = await this.findOnce('code', code);
        if (!found) return null;
        return {
          authorizationCode: code,
          expiresAt: new Date(found.token.expires_at),
          redirectUri: found.token.redirect_uri ?? '',
          scope: found.grant.scopeList(),
          client: { id: String(found.grant.app_id), grants: [] },
          user: grantUser(found.grant),
          ...(found.token.code_challenge ? { codeChallenge: found.token.code_challenge, codeChallengeMethod: 'S256' } : {}),
        };
      },
      revokeAuthorizationCode: (code: OAuth2Server.AuthorizationCode) => this.markUsed('code', code.authorizationCode),
      saveAuthorizationCode: () => Promise.reject(new Error('codes are issued by the consent page (issueCode)')),
      validateScope: (_user: OAuth2Server.User, _client: OAuth2Server.Client, scope?: string[]) => Promise.resolve(scope ?? false),
      generateAccessToken: (_client: OAuth2Server.Client, user: OAuth2Server.User) =>
        Promise.resolve(`oat_${(user as GrantUser).livemode ? 'live' : 'test'}_${randomBase62(40)}`),
      generateRefreshToken: (_client: OAuth2Server.Client, user: OAuth2Server.User) =>
        Promise.resolve(`ort_${(user as GrantUser).livemode ? 'live' : 'test'}_${randomBase62(40)}`),
      saveToken: async (token: OAuth2Server.Token, client: OAuth2Server.Client, user: OAuth2Server.User) => {
        const owner = user as GrantUser;
        const grant = await OAuthGrant.acrossTenants(grantsAccess, this.db.current).findById(owner.grantId);
        if (!grant || grant.revoked_at) return null;
        const now = toDbTime(new Date());
        const row = (kind: TokenKind, value: string, expires: Date) => ({
          kind,
          token_hash: hashKey(value),
          code_challenge: null,
          redirect_uri: null,
          expires_at: toDbTime(expires),
          used_at: null,
          created_at: now,
          updated_at: now,
        });
        await OAuthToken.insertAll(grant, this.db.current, [
          row('access', token.accessToken, token.accessTokenExpiresAt!),
          ...(token.refreshToken ? [row('refresh', token.refreshToken, token.refreshTokenExpiresAt!)] : []),
        ]);
        // Extra attributes become fields of the token response: the contract's business_id and livemode, nothing else.
        const { authorizationCode: _code, ...issued } = token;
        return { ...issued, client, user, business_id: grant.business_id, livemode: grant.livemode };
      },
      getRefreshToken: async (refreshToken: string) => {
        const found = await this.findOnce('refresh', refreshToken);
        if (!found) return null;
        return {
          refreshToken,
          refreshTokenExpiresAt: new Date(found.token.expires_at),
          scope: found.grant.scopeList(),
          client: { id: String(found.grant.app_id), grants: [] },
          user: grantUser(found.grant),
        };
      },
      revokeToken: (token: OAuth2Server.RefreshToken) => this.markUsed('refresh', token.refreshToken),
      getAccessToken: async (accessToken: string) => {
        const found = await this.find('access', accessToken);
        if (!found) return null;
        return { accessToken, accessTokenExpiresAt: new Date(found.token.expires_at), client: { id: String(found.grant.app_id), grants: [] }, user: grantUser(found.grant) };
      },
    };
  }

  /** A code or refresh token not used before; one presented again revokes its grant (RFC 6749 §4.1.2, §10.4). */
  private async findOnce(kind: 'code' | 'refresh', value: string) {
    const found = await this.find(kind, value);
    if (!found) return null;
    if (found.token.used_at) {
      await this.revokeGrant(found.grant);
      return null;
    }
    return found;
  }

  private async markUsed(kind: 'code' | 'refresh', value: string): Promise<boolean> {
    const found = await this.find(kind, value);
    if (!found) return false;
    const marked = await OAuthToken.ofGrants([found.grant], this.db.current)
      .where({ id: found.token.id })
      .whereNull('used_at')
      .patch({ used_at: new Date().toISOString() });
    return marked === 1;
  }

  private async revokeGrant(grant: OAuthGrant): Promise<void> {
    await grant.$query(this.db.current).patch({ revoked_at: new Date().toISOString() });
    this.cache?.clear();
  }

  /** The token and its live grant (of an app not revoked), by the token's hash. */
  private async find(kind: TokenKind, value: string): Promise<{ token: OAuthToken; grant: OAuthGrant } | null> {
    const grantIds = OAuthToken.tokenOwners(this.db.current, kind, hashKey(value));
    const grant = await OAuthGrant.acrossTenants(grantsAccess, this.db.current).whereIn('id', grantIds).whereNull('revoked_at').first();
    if (!grant) return null;
    const token = await OAuthToken.ofGrants([grant], this.db.current).findOne({ kind, token_hash: hashKey(value) });
    if (!token) return null;
    const app = await OAuthApp.query(this.db.current).findById(grant.app_id);
    return app && !app.revoked_at ? { token, grant } : null;
  }
}

function grantUser(grant: OAuthGrant): GrantUser {
  return { grantId: grant.id, businessId: grant.business_id, livemode: grant.livemode };
}
