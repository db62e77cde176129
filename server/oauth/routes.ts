/**
 * `POST /oauth/token` (authorization-code and refresh-token grants: client authentication and
 * RFC 6749 §5.2 errors by @node-oauth/oauth2-server, the grants themselves in grant-types.ts) and `POST /oauth/revoke` (RFC 7009). Form-encoded; clients authenticate with HTTP Basic or
 * `client_secret` in the body (public apps: `client_id` and PKCE).
 */
import OAuth2Server, { Request as OAuthRequest, Response as OAuthResponse } from '@node-oauth/oauth2-server';
import { Request, Response, Router } from 'express';
import { parseForm } from '../pages/form-body';
import { grantTypes } from './grant-types';
import { ACCESS_TOKEN_SECONDS, OAuthTokens, REFRESH_TOKEN_SECONDS } from './tokens';

const GRANT_TYPES = ['authorization_code', 'refresh_token'];


/** RFC 6749 §5.2 bodies, never cached; `invalid_client` is always a 401 (the contract), with a Basic challenge. */
function sendOAuth(res: Response, status: number, body: Record<string, unknown>, headers: Record<string, string> = {}): void {
  const unauthorized = body.error === 'invalid_client';
  res
    .status(unauthorized ? 401 : status)
    .set({ ...headers, 'Cache-Control': 'no-store', Pragma: 'no-cache', ...(unauthorized ? { 'WWW-Authenticate': 'Basic realm="oauth"' } : {}) })
    .json(body);
}

/** HTTP Basic client credentials, form-url-decoded as RFC 6749 §2.3.1 says; null without (or with a malformed) header. */
function basicCredentials(req: Request): { clientId: string; clientSecret: string } | null {
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(req.get('authorization') ?? '');
  if (!basic) return null;
  const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return null;
  try {
    const decode = (part: string) => decodeURIComponent(part.replace(/\+/g, ' '));
    return { clientId: decode(decoded.slice(0, colon)), clientSecret: decode(decoded.slice(colon + 1)) };
  } catch {
    return null;
  }
}

/** `client_id`/`client_secret` from HTTP Basic or the body. */
function clientCredentials(req: Request): { clientId?: string; clientSecret?: string } {
  const basic = basicCredentials(req);
  if (basic) return basic;
  const body = (req.body ?? {}) as Record<string, unknown>;
  return {
    clientId: typeof body.client_id === 'string' ? body.client_id : undefined,
    clientSecret: typeof body.client_secret === 'string' ? body.client_secret : undefined,
  };
}

export function oauthRoutes(tokens: OAuthTokens): Router {
  const model = tokens.clientModel();
  const server = new OAuth2Server({
    // Only the token endpoint is used, whose grants are ours: the library looks up clients and nothing else.
    model: model as OAuth2Server.ServerOptions['model'],
    // The lifetimes are OAuthTokens.redeem's; the library wants them all the same.
    accessTokenLifetime: ACCESS_TOKEN_SECONDS,
    refreshTokenLifetime: REFRESH_TOKEN_SECONDS,
    extendedGrantTypes: grantTypes(tokens),
    allowExtendedTokenAttributes: true,
    // A public app refreshes with its client_id alone; a confidential one still has to authenticate (getClient refuses it otherwise).
    requireClientAuthentication: { refresh_token: false },
  });
  const r = Router();

  r.post('/oauth/token', parseForm, async (req, res) => {
    const grantType = (req.body as Record<string, unknown> | undefined)?.grant_type;
    // The library also knows the password and client-credentials grants; this server offers neither.
    if (typeof grantType === 'string' && !GRANT_TYPES.includes(grantType)) {
      return sendOAuth(res, 400, { error: 'unsupported_grant_type', error_description: `grant_type must be one of: ${GRANT_TYPES.join(', ')}` });
    }
    // Single-valued headers only: a repeated header is not something a token request needs.
    const headers = Object.fromEntries(Object.entries(req.headers).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
    // RFC 6749 §2.3.1: Basic credentials are form-url-encoded first (oauth4webapi sends app%5F…); the library does not decode them.
    const basic = basicCredentials(req);
    if (basic) headers.authorization = `Basic ${Buffer.from(`${basic.clientId}:${basic.clientSecret}`).toString('base64')}`;
    const request = new OAuthRequest({ method: req.method, headers, query: {}, body: (req.body ?? {}) as Record<string, unknown> });
    const response = new OAuthResponse({ headers: {} });
    try {
      await server.token(request, response);
    } catch {
      // The library has written the RFC 6749 §5.2 error into `response`.
    }
    const body = (response.body ?? {}) as Record<string, unknown>;
    // Issued for exactly this long: the library counts down the milliseconds already spent.
    if (typeof body.access_token === 'string') body.expires_in = ACCESS_TOKEN_SECONDS;
    sendOAuth(res, response.status ?? 200, body, response.headers);
  });

  r.post('/oauth/revoke', parseForm, async (req, res) => {
    const { clientId, clientSecret } = clientCredentials(req);
    const client = clientId ? await model.getClient(clientId, clientSecret as string) : null;
    if (!client) return sendOAuth(res, 401, { error: 'invalid_client', error_description: 'Client authentication failed' });
    const token = (req.body as Record<string, unknown> | undefined)?.token;
    if (typeof token !== 'string' || !token) return sendOAuth(res, 400, { error: 'invalid_request', error_description: 'Missing parameter: `token`' });
    // RFC 7009 §2.2: an unknown or foreign token is answered the same, 200.
    await tokens.revoke(token, Number(client.id));
    res.status(200).set('Cache-Control', 'no-store').end();
  });
  return r;
}
