/**
 * `GET /oauth/authorize`'s request, checked in the order RFC 6749 §4.1.2.1 asks: an unknown client
 * or an unregistered redirect URI is shown as a page (never redirected to); every other problem is
 * sent back to the registered redirect URI with `error` and `state`.
 */
import { ALL_SCOPES, isScope, Scope } from '../auth/scopes';
import { Database } from '../db/database';
import { OAuthApp } from './model';

export interface AuthorizationRequest {
  app: { id: number; name: string; clientId: string; public: boolean };
  redirectUri: string;
  /** The redirect URI the request named, null when it named none (the app's only one is used): the code exchange must repeat it (RFC 6749 §4.1.3). */
  namedRedirectUri: string | null;
  scopes: Scope[];
  state: string | null;
  codeChallenge: string | null;
  livemode: boolean;
}

export type Checked =
  | { kind: 'ok'; request: AuthorizationRequest }
  | { kind: 'page'; message: string }
  | { kind: 'redirect'; redirectUri: string; error: string; description: string; state: string | null };

const one = (query: Record<string, unknown>, name: string): string | undefined => {
  const value = query[name];
  return typeof value === 'string' ? value : undefined;
};

/** The parameters the consent form carries forward, as they came. */
export const AUTHORIZE_PARAMETERS = ['response_type', 'client_id', 'redirect_uri', 'scope', 'scopes', 'state', 'code_challenge', 'code_challenge_method', 'mode'];

export async function checkAuthorization(db: Database, query: Record<string, unknown>): Promise<Checked> {
  const clientId = one(query, 'client_id');
  const app = clientId ? await OAuthApp.query(db.current).findOne({ client_id: clientId }) : undefined;
  if (!app || app.revoked_at) return { kind: 'page', message: 'This application is not known. Ask the platform that sent you here.' };
  const registered = JSON.parse(app.redirect_uris) as string[];
  const asked = one(query, 'redirect_uri');
  const redirectUri = asked ?? (registered.length === 1 ? registered[0] : undefined);
  if (!redirectUri || !registered.includes(redirectUri)) return { kind: 'page', message: 'The redirect address is not registered for this application.' };

  const state = one(query, 'state') ?? null;
  const fail = (error: string, description: string): Checked => ({ kind: 'redirect', redirectUri, error, description, state });
  if (one(query, 'response_type') !== 'code') return fail('unsupported_response_type', 'response_type must be code');
  // RFC 6749's `scope` (space-separated) or the specification's `scopes` (commas or spaces).
  const rawScopes = (one(query, 'scope') ?? one(query, 'scopes') ?? '').split(/[\s,]+/).filter(Boolean);
  if (!rawScopes.length) return fail('invalid_scope', 'name at least one scope');
  const unknown = rawScopes.filter((scope) => !isScope(scope));
  if (unknown.length) return fail('invalid_scope', `unknown scope: ${unknown.join(' ')} (known: ${ALL_SCOPES.join(' ')})`);
  const codeChallenge = one(query, 'code_challenge') ?? null;
  const method = one(query, 'code_challenge_method');
  if (codeChallenge && method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256');
  if (codeChallenge && !/^[A-Za-z0-9_-]{43}$/.test(codeChallenge)) return fail('invalid_request', 'code_challenge must be a base64url SHA-256');
  const isPublic = app.client_secret_hash === null;
  if (isPublic && !codeChallenge) return fail('invalid_request', 'a public application must use PKCE (code_challenge with S256)');
  const mode = one(query, 'mode') ?? 'live';
  if (mode !== 'live' && mode !== 'test') return fail('invalid_request', 'mode must be test or live');

  return {
    kind: 'ok',
    request: {
      app: { id: app.id, name: app.name, clientId: app.client_id, public: isPublic },
      redirectUri,
      namedRedirectUri: asked ?? null,
      scopes: [...new Set(rawScopes)] as Scope[],
      state,
      codeChallenge,
      livemode: mode === 'live',
    },
  };
}

/** `redirectUri` with these parameters added (RFC 6749 §4.1.2: the query is kept). */
export function redirectWith(redirectUri: string, params: Record<string, string | null>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== null) url.searchParams.set(name, value);
  return url.toString();
}
