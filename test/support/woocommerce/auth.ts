/**
 * WooCommerce's REST API keys and their check, reproduced from WC_REST_Authentication
 * (plugins/woocommerce/includes/class-wc-rest-authentication.php): Basic or query-string keys over
 * HTTPS, one-legged OAuth 1.0a (HMAC-SHA1 or HMAC-SHA256, 15-minute window, single-use nonces) over
 * plain HTTP. Anything WooCommerce would not accept is refused, with the code and message it uses.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { IncomingHttpHeaders } from 'node:http';
import { PhpArray, PhpValue, phpEmpty, rawurldecode, rawurlencode, urldecode } from './php';

export type KeyPermissions = 'read' | 'write' | 'read_write';

/** How a request proved who it is, as recorded in `store.requests`. */
export type AuthKind = 'basic' | 'query' | 'oauth1' | 'none';

export interface WpError {
  status: number;
  code: string;
  message: string;
}

export interface AuthRequest {
  method: string;
  /** The path exactly as sent, before any decoding: WooCommerce signs it that way. */
  rawPath: string;
  query: PhpArray;
  /** $_POST: only a form-encoded POST body fills it. */
  form: PhpArray;
  headers: IncomingHttpHeaders;
  secure: boolean;
}

export interface AuthResult {
  kind: AuthKind;
  authenticated: boolean;
  /** An error WooCommerce raises before routing (a bad key, signature, timestamp, nonce or permission). */
  error?: WpError;
}

/** WooCommerce's window for both the timestamp and the remembered nonces. */
const VALID_WINDOW_SECONDS = 15 * 60;
const OAUTH_PARAMS = ['oauth_consumer_key', 'oauth_timestamp', 'oauth_nonce', 'oauth_signature', 'oauth_signature_method'];

const authError = (message: string, code = 'woocommerce_rest_authentication_error'): WpError => ({ status: 401, code, message });

/** A REST API key as a test sees it: a row of wp_woocommerce_api_keys, without its secrets. */
export interface WooApiKey {
  id: number;
  /** "<app name> - API (<date>)" for a key an app was granted; the owner's text for one made by hand. */
  description: string;
  /** The WordPress user the key acts as. */
  userId: number;
  permissions: KeyPermissions;
  /** The last 7 characters of the consumer key, as WooCommerce lists it. */
  truncatedKey: string;
  /** False once the key was revoked (or deleted after a failed app authorization). */
  exists: boolean;
}

interface StoredKey extends WooApiKey {
  consumerKey: string;
  consumerSecret: string;
  /** WooCommerce keeps a key's used OAuth nonces in its row, keyed by the request's timestamp. */
  nonces: Map<string, string>;
}

/** wc_rand_hash(): 40 hex characters, which `ck_` or `cs_` prefix. */
export const randHash = () => randomBytes(20).toString('hex');

/** The store's wp_woocommerce_api_keys table. */
export class ApiKeys {
  private readonly rows: StoredKey[] = [];

  /** Inserts a key; its id is the table's next one. */
  add(key: { userId: number; description: string; permissions: KeyPermissions; consumerKey: string; consumerSecret: string }): WooApiKey {
    const row: StoredKey = { ...key, id: this.rows.length + 1, truncatedKey: key.consumerKey.slice(-7), exists: true, nonces: new Map() };
    this.rows.push(row);
    return publicKey(row);
  }

  /** get_user_data_by_consumer_key(): a key that still exists. */
  find(consumerKey: string): StoredKey | undefined {
    return this.rows.find((k) => k.exists && k.consumerKey === consumerKey);
  }

  /** Deletes the row; false when there was none. */
  delete(id: number): boolean {
    const row = this.rows.find((k) => k.id === id && k.exists);
    if (row) row.exists = false;
    return Boolean(row);
  }

  /** Every key ever made, deleted ones marked, oldest first. */
  list(): WooApiKey[] {
    return this.rows.map(publicKey);
  }
}

const publicKey = ({ id, description, userId, permissions, truncatedKey, exists }: StoredKey): WooApiKey => ({
  id, description, userId, permissions, truncatedKey, exists,
});

export class WooAuthenticator {
  constructor(
    private readonly keys: ApiKeys,
    private readonly homeUrl: string,
    private readonly nowSeconds: () => number = () => Math.floor(Date.now() / 1000),
  ) {}

  /** authenticate() then check_user_permissions(): what WordPress knows before it looks for a route. */
  authenticate(req: AuthRequest): AuthResult {
    const kind = presentedKind(req);
    let error: WpError | undefined;
    if (req.secure) {
      const basic = this.basic(req);
      if (basic.key) return this.withPermissions(kind, req.method, basic.key.permissions);
      error = basic.error;
    }
    // Over HTTPS a failed or absent Basic key still falls through to OAuth, as in WooCommerce; over
    // plain HTTP Basic credentials are never even read, so they end as "not logged in" (401).
    const oauth = this.oauth(req);
    if (oauth.key) return this.withPermissions(kind, req.method, oauth.key.permissions);
    return { kind, authenticated: false, error: oauth.error ?? error };
  }

  private basic(req: AuthRequest): { key?: StoredKey; error?: WpError } {
    let key = '';
    let secret = '';
    const qKey = req.query.get('consumer_key');
    const qSecret = req.query.get('consumer_secret');
    if (!phpEmpty(qKey) && !phpEmpty(qSecret) && typeof qKey === 'string' && typeof qSecret === 'string') {
      key = qKey;
      secret = qSecret;
    }
    if (!key) {
      const credentials = basicCredentials(req.headers.authorization);
      if (credentials && !phpEmpty(credentials.user) && !phpEmpty(credentials.password)) {
        key = credentials.user;
        secret = credentials.password;
      }
    }
    const stored = key && secret ? this.keys.find(key) : undefined;
    if (!stored) return {};
    if (!hashEquals(stored.consumerSecret, secret)) return { error: authError('Consumer secret is invalid.') };
    return { key: stored };
  }

  private oauth(req: AuthRequest): { key?: StoredKey; error?: WpError } {
    const params = oauthParams(req);
    const missing = OAUTH_PARAMS.filter((name) => phpEmpty(params.get(name)));
    if (missing.length === OAUTH_PARAMS.length) return {};
    if (missing.length) {
      const message = `Missing OAuth parameter${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`;
      return { error: authError(message, 'woocommerce_rest_authentication_missing_parameter') };
    }
    const consumerKey = params.get('oauth_consumer_key');
    const key = typeof consumerKey === 'string' ? this.keys.find(consumerKey) : undefined;
    if (!key) return { error: authError('Consumer key is invalid.') };
    const error =
      this.checkSignature(req, params, key.consumerSecret) ??
      this.checkTimestampAndNonce(key.nonces, params.get('oauth_timestamp'), params.get('oauth_nonce'));
    return error ? { error } : { key };
  }

  /**
   * check_oauth_signature(): METHOD & rawurlencode(home URL + raw request path) & the parameters,
   * sorted by raw name (strcmp), names and values rawurlencoded, then each `name=value` pair
   * rawurlencoded again and joined with '%26'. The key is always `consumer_secret&` (no token).
   */
  private checkSignature(req: AuthRequest, params: PhpArray, consumerSecret: string): WpError | undefined {
    const given = params.get('oauth_signature');
    const signed = new Map(params);
    signed.delete('oauth_signature');
    const sorted = [...signed.entries()].sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    const pairs = sorted.flatMap(([name, value]) => joinWithEqualsSign(rawurlencode(name), encodeValues(value)));
    const baseUri = rawurlencode(this.homeUrl + req.rawPath.split('?')[0]);
    const stringToSign = `${req.method.toUpperCase()}&${baseUri}&${pairs.join('%26')}`;

    const method = signed.get('oauth_signature_method');
    if (method !== 'HMAC-SHA1' && method !== 'HMAC-SHA256') return authError('Invalid signature - signature method is invalid.');
    const algorithm = method === 'HMAC-SHA1' ? 'sha1' : 'sha256';
    const expected = createHmac(algorithm, `${consumerSecret}&`).update(stringToSign).digest('base64');
    const provided = typeof given === 'string' ? rawurldecode(given.replace(/ /g, '+')) : '';
    if (!hashEquals(expected, provided)) return authError('Invalid signature - provided signature does not match.');
    return undefined;
  }

  /** check_oauth_timestamp_and_nonce(): ±15 minutes, and a nonce is refused while it is remembered. */
  private checkTimestampAndNonce(usedNonces: Map<string, string>, timestamp: PhpValue | undefined, nonce: PhpValue | undefined): WpError | undefined {
    const now = this.nowSeconds();
    const ts = typeof timestamp === 'string' && /^\d+$/.test(timestamp) ? Number(timestamp) : NaN;
    if (typeof timestamp !== 'string' || !(ts >= now - VALID_WINDOW_SECONDS && ts <= now + VALID_WINDOW_SECONDS)) return authError('Invalid timestamp.');
    if (typeof nonce !== 'string' || [...usedNonces.values()].includes(nonce)) {
      return authError('Invalid nonce - nonce has already been used.');
    }
    usedNonces.set(timestamp, nonce);
    for (const [at] of usedNonces) if (Number(at) < now - VALID_WINDOW_SECONDS) usedNonces.delete(at);
    return undefined;
  }

  private withPermissions(kind: AuthKind, method: string, permissions: KeyPermissions): AuthResult {
    const upper = method.toUpperCase();
    let error: WpError | undefined;
    if (['HEAD', 'GET'].includes(upper) && permissions === 'write') {
      error = authError('The API key provided does not have read permissions.');
    } else if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(upper) && permissions === 'read') {
      error = authError('The API key provided does not have write permissions.');
    } else if (!['HEAD', 'GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].includes(upper)) {
      error = authError('Unknown request method.');
    }
    return { kind, authenticated: !error, error };
  }
}

/** get_oauth_parameters(): $_GET, then $_POST over it, then an `Authorization: OAuth` header over both. */
function oauthParams(req: AuthRequest): PhpArray {
  return new Map([...req.query, ...req.form, ...headerOAuthParams(req.headers.authorization)]);
}

/** What the client presented, whether or not WooCommerce would read it on this scheme. */
export function presentedKind(req: AuthRequest): AuthKind {
  if (OAUTH_PARAMS.some((name) => !phpEmpty(oauthParams(req).get(name)))) return 'oauth1';
  if (basicCredentials(req.headers.authorization)) return 'basic';
  if (!phpEmpty(req.query.get('consumer_key'))) return 'query';
  return 'none';
}

/** normalize_parameters(): values are rawurlencoded recursively; nested keys are left as they came. */
function encodeValues(value: PhpValue): PhpValue {
  if (typeof value === 'string') return rawurlencode(value);
  return new Map([...value].map(([k, v]) => [k, encodeValues(v)]));
}

/** join_with_equals_sign(): `a%5Bb%5D=v` for nested values, and each whole pair rawurlencoded once more. */
function joinWithEqualsSign(key: string, value: PhpValue): string[] {
  if (typeof value === 'string') return [rawurlencode(`${key}=${value}`)];
  return [...value].flatMap(([inner, v]) => joinWithEqualsSign(`${key}%5B${inner}%5D`, v));
}

/** hash_equals(): constant-time on equal lengths; a different length is simply unequal. */
function hashEquals(known: string, given: string): boolean {
  const a = Buffer.from(known);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** PHP_AUTH_USER / PHP_AUTH_PW: only an Authorization header of the Basic scheme fills them. */
function basicCredentials(header: string | undefined): { user: string; password: string } | undefined {
  const match = /^Basic\s+(\S+)$/i.exec(header?.trim() ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** parse_header(): OAuth parameters may also come in an `Authorization: OAuth …` header. */
function headerOAuthParams(header: string | undefined): [string, PhpValue][] {
  const value = header?.trim() ?? '';
  if (!value.startsWith('OAuth ')) return [];
  const params: [string, PhpValue][] = [];
  for (const m of value.matchAll(/(oauth_[a-z_-]*)=(:?"([^"]*)"|([^,]*))/g)) {
    params.push([m[1], urldecode(m[3] || m[4] || '')]);
  }
  return params;
}
