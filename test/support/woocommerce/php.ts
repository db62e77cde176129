/**
 * The few PHP and WordPress behaviours the WooCommerce double must reproduce byte for byte: how PHP
 * reads a query string, how rawurlencode() and wp_json_encode() write, how WordPress prints and
 * parses dates. Clients are judged against these, so they are not "cleaned up" into Node's habits.
 */

/** A PHP array as parse_str() builds it: insertion-ordered, string keys, values nested. */
export type PhpValue = string | PhpArray;
export type PhpArray = Map<string, PhpValue>;

/** PHP's rawurlencode(): RFC 3986, so encodeURIComponent() plus the five characters it leaves alone. */
export function rawurlencode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** PHP's urldecode(): '+' is a space, then percent-decoding; a malformed escape stays as it is. */
export function urldecode(value: string): string {
  const spaced = value.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  }
}

/** PHP's rawurldecode(): like urldecode() but '+' stays a '+'. */
export function rawurldecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * PHP's parse_str(), which fills $_GET and $_POST: `a[b]=1&a[]=2` nests, a repeated plain key keeps
 * its first position and its last value, and '.' or ' ' in a top-level name becomes '_'. WooCommerce
 * signs what PHP parsed, not the raw query, so a client is verified against exactly this.
 */
export function parseStr(query: string): PhpArray {
  const result: PhpArray = new Map();
  for (const pair of query.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawKey = urldecode(eq === -1 ? pair : pair.slice(0, eq));
    const value = eq === -1 ? '' : urldecode(pair.slice(eq + 1));
    const path = keyPath(rawKey);
    if (path) assign(result, path, value);
  }
  return result;
}

function keyPath(rawKey: string): (string | null)[] | undefined {
  const key = rawKey.replace(/^ +/, '');
  const open = key.indexOf('[');
  const closes = open === -1 ? -1 : key.indexOf(']', open);
  const topName = (closes === -1 ? key : key.slice(0, open)).replace(/[. []/g, '_');
  if (topName === '') return undefined;
  const path: (string | null)[] = [topName];
  let rest = closes === -1 ? '' : key.slice(open);
  while (rest.startsWith('[')) {
    const end = rest.indexOf(']');
    if (end === -1) break;
    const inner = rest.slice(1, end);
    path.push(inner === '' ? null : inner);
    rest = rest.slice(end + 1);
  }
  return path;
}

function assign(target: PhpArray, path: (string | null)[], value: string): void {
  let node = target;
  path.forEach((segment, i) => {
    const key = segment ?? nextIndex(node);
    if (i === path.length - 1) {
      node.set(key, value);
      return;
    }
    const existing = node.get(key);
    const child = existing instanceof Map ? existing : new Map<string, PhpValue>();
    node.set(key, child);
    node = child;
  });
}

function nextIndex(array: PhpArray): string {
  const ints = [...array.keys()].filter((k) => /^(0|-?[1-9]\d*)$/.test(k)).map(Number);
  return String(ints.length ? Math.max(...ints) + 1 : 0);
}

/** PHP's empty() for a request parameter: missing, '', '0' and an empty array all count as empty. */
export function phpEmpty(value: PhpValue | undefined): boolean {
  if (value === undefined) return true;
  if (value instanceof Map) return value.size === 0;
  return value === '' || value === '0';
}

/** A parsed PHP array as the plain object a WordPress route sees (arrays with 0..n keys become lists). */
export function phpToPlain(value: PhpValue): unknown {
  if (typeof value === 'string') return value;
  const keys = [...value.keys()];
  if (keys.every((k, i) => k === String(i))) return [...value.values()].map(phpToPlain);
  return Object.fromEntries(keys.map((k) => [k, phpToPlain(value.get(k)!)]));
}

/**
 * wp_json_encode() with WordPress's default flags: '/' is written '\/' and every non-ASCII character
 * as a lowercase \uXXXX escape. Webhook signatures are computed over these bytes, so a receiver that
 * re-serialises the JSON before checking the signature fails here as it would against WooCommerce.
 */
export function wpJsonEncode(value: unknown): string {
  return JSON.stringify(value)
    .replace(/\//g, '\\/')
    .replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** wc_rest_prepare_date_response(): 'Y-m-d\TH:i:s' in the given offset from UTC, no zone designator. */
export function wpDate(date: Date, offsetMinutes: number): string {
  return new Date(date.getTime() + offsetMinutes * 60_000).toISOString().slice(0, 19);
}

const REST_DATE = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?$/;

/**
 * rest_parse_date() for a `date-time` request argument: an explicit offset or 'Z' names the instant;
 * without one the wall time is read in `defaultOffsetMinutes` (the site's zone, or UTC when the
 * request says dates_are_gmt). Undefined when WordPress would answer "Invalid date.".
 */
export function parseRestDate(value: string, defaultOffsetMinutes: number): Date | undefined {
  const m = REST_DATE.exec(value);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, zulu, sign, oh, om] = m;
  const wall = Date.UTC(+y, +mo - 1, +d, +h, +mi, +s);
  let offset = defaultOffsetMinutes;
  if (zulu) offset = 0;
  else if (sign) offset = (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om ?? 0));
  const date = new Date(wall - offset * 60_000);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** PHP's urlencode(): like rawurlencode() but a space is '+' (and '~' is encoded). */
export function urlencode(value: string): string {
  return rawurlencode(value).replace(/%20/g, '+').replace(/~/g, '%7E');
}

/**
 * WordPress's add_query_arg( $args, $url ): the URL's own query is parsed (parse_str) and written
 * back urlencode()d, the new arguments are set as they are (not encoded), a value already there is
 * replaced in place, empty values lose their '=', and the fragment stays last.
 */
export function addQueryArg(args: [string, string][], url: string): string {
  const hash = url.indexOf('#');
  const frag = hash === -1 ? '' : url.slice(hash);
  let uri = hash === -1 ? url : url.slice(0, hash);
  const protocol = /^https?:\/\//i.exec(uri)?.[0] ?? '';
  uri = uri.slice(protocol.length);
  let base: string;
  let query: string;
  const q = uri.indexOf('?');
  if (q !== -1) {
    base = uri.slice(0, q + 1);
    query = uri.slice(q + 1);
  } else if (protocol || !uri.includes('=')) {
    base = `${uri}?`;
    query = '';
  } else {
    base = '';
    query = uri;
  }
  const qs = urlencodeDeep(parseStr(query));
  for (const [name, value] of args) qs.set(name, value);
  const built = buildQuery(qs).replace(/^\?+|\?+$/g, '').replace(/=(&|$)/g, '$1');
  return `${protocol}${base}${built}${frag}`.replace(/\?+$/, '').replace('?#', '#');
}

function urlencodeDeep(value: PhpArray): PhpArray {
  return new Map([...value].map(([k, v]) => [k, typeof v === 'string' ? urlencode(v) : urlencodeDeep(v)]));
}

/** _http_build_query( $data, null, '&', '', false ): nothing encoded, nested keys as a%5Bb%5D. */
function buildQuery(data: PhpArray, prefix = ''): string {
  return [...data]
    .map(([k, v]) => {
      const key = prefix ? `${prefix}%5B${k}%5D` : k;
      return typeof v === 'string' ? `${key}=${v}` : buildQuery(v, key);
    })
    .join('&');
}

/**
 * sanitize_text_field(), which wc_clean() is for a string: tags stripped, line breaks and tabs and
 * runs of spaces made one space, trimmed, and percent-encoded octets (%20, %2F…) removed.
 */
export function wcClean(value: string): string {
  let filtered = value.replace(/<[^>]*>/g, '').replace(/[\r\n\t ]+/g, ' ').trim();
  if (/%[a-f0-9]{2}/i.test(filtered)) filtered = filtered.replace(/%[a-f0-9]{2}/gi, '').replace(/ +/g, ' ').trim();
  return filtered;
}

/** esc_html() and esc_attr(): the five characters HTML gives a meaning to. */
export function escHtml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#039;');
}

const SAFE_PROTOCOLS = ['http', 'https', 'ftp', 'ftps', 'mailto', 'news', 'irc', 'irc6', 'ircs', 'gopher', 'nntp', 'feed', 'telnet', 'mms', 'rtsp', 'sms', 'svn', 'tel', 'fax', 'xmpp', 'webcal', 'urn'];

/**
 * esc_url() (display: for an href, '&' and "'" as entities) and esc_url_raw() (raw): spaces become
 * %20, characters a URL cannot hold are dropped, and a URL of another protocol (javascript:) is ''.
 */
export function escUrl(url: string, context: 'display' | 'raw' = 'display'): string {
  let out = url.replace(/^\s+/, '').replace(/ /g, '%20').replace(/[^a-z0-9\-~+_.?#=!&;,/:%@$|*'()[\]\u0080-\uffff]/gi, '');
  while (/%0[ad]/i.test(out)) out = out.replace(/%0[ad]/gi, '');
  out = out.replace(';//', '://');
  if (out === '') return out;
  if (!out.includes(':') && !['/', '#', '?'].includes(out[0]) && !/^[a-z0-9-]+?\.php/i.test(out)) out = `http://${out}`;
  const scheme = /^([^:/?#]+):/.exec(out)?.[1];
  if (scheme && !SAFE_PROTOCOLS.includes(scheme.toLowerCase())) return '';
  return context === 'display' ? out.replace(/&/g, '&#038;').replace(/'/g, '&#039;') : out;
}

/** wp_sanitize_redirect(): what a Location header may carry, spaces and multibyte characters percent-encoded. */
export function sanitizeRedirect(location: string): string {
  let out = location
    .replace(/ /g, '%20')
    .replace(/[\u0080-\uffff]+/g, (s) => encodeURIComponent(s))
    .replace(/[^a-z0-9\-~+_.?#=&;,/:%!*[\]()@]/gi, '');
  while (/%0[ad]/i.test(out)) out = out.replace(/%0[ad]/gi, '');
  return out;
}

/** filter_var( $url, FILTER_VALIDATE_URL ): only URL characters, a scheme, and for http(s) a valid host name. */
export function isValidUrl(url: string): boolean {
  if (!/^[A-Za-z0-9$\-_.+!*'(),{}|\\^~[\]`<>#%";/?:@&=]*$/.test(url)) return false;
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):(?:\/\/([^/?#]*))?/.exec(url);
  if (!m) return false;
  const [, scheme, authority] = m;
  const hostPort = authority?.slice(authority.lastIndexOf('@') + 1);
  const portMatch = hostPort === undefined ? null : /^(.*?)(?::(\d*))?$/.exec(hostPort);
  const host = portMatch?.[1] ?? '';
  if (portMatch?.[2] && Number(portMatch[2]) > 65535) return false;
  if (['http', 'https'].includes(scheme.toLowerCase())) {
    if (!host) return false;
    if (/^\[[0-9a-f:.]+\]$/i.test(host)) return true;
    const labels = host.replace(/\.$/, '').split('.');
    return host.length <= 253 && labels.every((l) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i.test(l));
  }
  return Boolean(host) || ['mailto', 'news', 'file'].includes(scheme.toLowerCase());
}
