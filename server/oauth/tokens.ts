/**
 * OAuth codes and tokens of grants: issued by the consent page (codes) and by the token endpoint
 * (grant-types.ts, which checks a presented code or refresh token before `redeem` consumes it),
 * resolved into credentials like API keys, revoked (RFC 7009). Every code and token is random and
 * known here only by its SHA-256. A code or refresh token is used once: presented again, it
 * revokes the whole grant.
 */
import OAuth2Server from '@node-oauth/oauth2-server';
import { LRUCache } from 'lru-cache';
import { acrossTenants } from '../auth/actor';
import { Credential } from '../auth/credential';
import { Scope } from '../auth/scopes';
import { Clock, systemClock } from '../clock';
import { Database } from '../db/database';
import { toDbTime } from '../db/time';
import { hashKey, randomBase62, sameHash } from '../keys/token';
import { OAuthApp, OAuthGrant, OAuthToken, TokenKind } from './model';

export const ACCESS_TOKEN_SECONDS = 3600;
export const REFRESH_TOKEN_SECONDS = 90 * 24 * 3600;
export const CODE_SECONDS = 600;

const ACCESS_TOKEN_PATTERN = /^oat_(test|live)_[0-9A-Za-z]{40}$/;

/** A code or token as presented, with its grant. */
export interface Presented {
  token: OAuthToken;
  grant: OAuthGrant;
}

/** A token response's fields, as @node-oauth/oauth2-server names them, plus the contract's business_id and livemode. */
export interface IssuedTokens {
  accessToken: string;
  accessTokenExpiresAt: Date;
  refreshToken: string;
  refreshTokenExpiresAt: Date;
  scope: Scope[];
  business_id: number;
  livemode: boolean;
}

/** What the consent page approved, to be turned into a code. */
export interface Approval {
  appId: number;
  ownerId: number;
  businessId: number;
  livemode: boolean;
  scopes: Scope[];
  /** The redirect URI the authorization request named; null when it named none. */
  redirectUri: string | null;
  codeChallenge: string | null;
}

export function looksLikeAccessToken(token: string): boolean {
  return ACCESS_TOKEN_PATTERN.test(token);
}

const grantsAccess = acrossTenants('oauth token lookup');

export class OAuthTokens {
  /** Resolved access tokens, kept a few seconds: a revocation reaches every process within `cacheTtlMs`. */
  private readonly cache: LRUCache<string, { credential: Credential } | { credential: null }> | null;

  private readonly cacheTtlMs: number;

  constructor(
    private readonly db: Database,
    options: { cacheTtlMs: number },
    /** The real time: codes and tokens expire by it, whatever a test business's clock says. */
    readonly clock: Clock = systemClock,
  ) {
    this.cacheTtlMs = Math.min(options.cacheTtlMs, 5000);
    this.cache = this.cacheTtlMs > 0 ? new LRUCache({ max: 10_000, ttl: this.cacheTtlMs }) : null;
  }

  /**
   * A code for what the owner approved. Re-authorizing an app for the same business and mode
   * updates its grant (so its rate-limit counter and idempotency keys carry on).
   */
  async issueCode(approval: Approval): Promise<string> {
    const code = `oac_${randomBase62(40)}`;
    const now = this.clock.now();
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
          scopes: JSON.stringify(approval.scopes),
          code_challenge: approval.codeChallenge,
          redirect_uri: approval.redirectUri,
          expires_at: toDbTime(new Date(now.getTime() + CODE_SECONDS * 1000)),
          used_at: null,
          created_at: toDbTime(now),
          updated_at: toDbTime(now),
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
    const expiresAt = found ? Date.parse(found.token.expires_at) : 0;
    const credential: Credential | null =
      found && expiresAt > this.clock.now().getTime()
        ? {
            kind: 'oauth_token',
            id: found.grant.id,
            businessId: found.grant.business_id,
            livemode: found.grant.livemode,
            scopes: grantedScopes(found.token, found.grant),
            appId: found.grant.app_id,
            // The grant's: rate limits and Idempotency-Keys carry over refreshed tokens.
            subject: `grant_${found.grant.id}`,
          }
        : null;
    // Kept no longer than the token lives: an expired token is refused at its expiry, not up to 5 s later.
    this.cache?.set(hash, { credential }, credential ? { ttl: Math.max(1, Math.min(this.cacheTtlMs, expiresAt - this.clock.now().getTime())) } : {});
    return credential;
  }

  /** RFC 7009: an access or refresh token of `clientAppId` stops working; anything else is ignored. */
  async revoke(token: string, clientAppId: number): Promise<void> {
    for (const kind of ['access', 'refresh'] as const) {
      const found = await this.find(kind, token);
      if (!found || found.grant.app_id !== clientAppId) continue;
      await OAuthToken.ofGrants([found.grant], this.db.current).where({ id: found.token.id }).patch({ expires_at: this.clock.now().toISOString() });
      if (kind === 'refresh') await this.revokeGrant(found.grant);
      this.cache?.delete(hashKey(token));
    }
  }

  /** The client of `POST /oauth/token` and `/oauth/revoke`, for @node-oauth/oauth2-server; a confidential app's secret is compared in constant time. */
  clientModel(): OAuth2Server.BaseModel {
    return {
      getClient: async (clientId: string, clientSecret: string | undefined) => {
        const app = await OAuthApp.query(this.db.current).findOne({ client_id: clientId });
        if (!app || app.revoked_at) return null;
        const confidential = app.client_secret_hash !== null;
        if (confidential && !(clientSecret && sameHash(app.client_secret_hash!, hashKey(clientSecret)))) return null;
        if (!confidential && clientSecret) return null;
        return { id: String(app.id), grants: ['authorization_code', 'refresh_token'], redirectUris: JSON.parse(app.redirect_uris) as string[] };
      },
      saveToken: () => Promise.reject(new Error('tokens are issued by OAuthTokens.redeem')),
    };
  }

  /** A presented code or refresh token, used or not, with its live grant: the grant type checks it before redeeming it. */
  presented(kind: 'code' | 'refresh', value: string): Promise<Presented | null> {
    return this.find(kind, value);
  }

  /**
   * Consumes a checked code or refresh token and issues an access token for `accessScopes` and a
   * refresh token for `refreshScopes`, in one transaction. One used before (or by a request that
   * won the race) revokes its grant instead (RFC 6749 §4.1.2, §10.4; RFC 9700 §4.14.2): null.
   */
  async redeem(presented: Presented, scopes: { access: Scope[]; refresh: Scope[] }): Promise<IssuedTokens | null> {
    const mode = presented.grant.livemode ? 'live' : 'test';
    const issuedAt = this.clock.now();
    const issued = {
      accessToken: `oat_${mode}_${randomBase62(40)}`,
      accessTokenExpiresAt: new Date(issuedAt.getTime() + ACCESS_TOKEN_SECONDS * 1000),
      refreshToken: `ort_${mode}_${randomBase62(40)}`,
      refreshTokenExpiresAt: new Date(issuedAt.getTime() + REFRESH_TOKEN_SECONDS * 1000),
    };
    const redeemed = await this.db.transaction(async (trx) => {
      const marked = await OAuthToken.ofGrants([presented.grant], trx).where({ id: presented.token.id }).whereNull('used_at').patch({ used_at: issuedAt.toISOString() });
      if (marked !== 1) {
        await presented.grant.$query(trx).patch({ revoked_at: issuedAt.toISOString() });
        return false;
      }
      const now = toDbTime(issuedAt);
      const row = (kind: TokenKind, value: string, tokenScopes: Scope[], expires: Date) => ({
        kind,
        token_hash: hashKey(value),
        scopes: JSON.stringify(tokenScopes),
        code_challenge: null,
        redirect_uri: null,
        expires_at: toDbTime(expires),
        used_at: null,
        created_at: now,
        updated_at: now,
      });
      await OAuthToken.insertAll(presented.grant, trx, [
        row('access', issued.accessToken, scopes.access, issued.accessTokenExpiresAt),
        row('refresh', issued.refreshToken, scopes.refresh, issued.refreshTokenExpiresAt),
      ]);
      return true;
    });
    if (!redeemed) {
      this.cache?.clear();
      return null;
    }
    return { ...issued, scope: scopes.access, business_id: presented.grant.business_id, livemode: presented.grant.livemode };
  }

  /** Ends a grant whose code or refresh token was presented again. */
  async revokeGrant(grant: OAuthGrant): Promise<void> {
    await grant.$query(this.db.current).patch({ revoked_at: this.clock.now().toISOString() });
    this.cache?.clear();
  }

  /** The token and its live grant (of an app not revoked), by the token's hash. */
  private async find(kind: TokenKind, value: string): Promise<Presented | null> {
    const grantIds = OAuthToken.tokenOwners(this.db.current, kind, hashKey(value));
    const grant = await OAuthGrant.acrossTenants(grantsAccess, this.db.current).whereIn('id', grantIds).whereNull('revoked_at').first();
    if (!grant) return null;
    const token = await OAuthToken.ofGrants([grant], this.db.current).findOne({ kind, token_hash: hashKey(value) });
    if (!token) return null;
    const app = await OAuthApp.query(this.db.current).findById(grant.app_id);
    return app && !app.revoked_at ? { token, grant } : null;
  }
}

/**
 * What a token may do: the scopes it was issued for, within its grant's scopes now (re-authorizing
 * the app with fewer scopes narrows the tokens already out; with more, it widens none).
 */
function grantedScopes(token: OAuthToken, grant: OAuthGrant): Scope[] {
  const granted = new Set(grant.scopeList());
  return token.scopeList().filter((scope) => granted.has(scope));
}
