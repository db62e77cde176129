/**
 * The WordPress around the WooCommerce double, as much as its app authorization needs: one shop
 * manager who signs in (wp-login.php, or WooCommerce's own form through `signOn`) and then carries
 * WordPress's logged_in cookie, nonces tied to that session (wp_create_nonce), and wp_die() pages.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { IncomingHttpHeaders } from 'node:http';
import { addQueryArg, escHtml, escUrl, PhpArray, PhpValue, sanitizeRedirect, urldecode, urlencode } from './php';

/** A page request as WordPress sees it: $_GET, $_POST (a form-encoded POST only) and the headers. */
export interface PageRequest {
  method: string;
  query: PhpArray;
  form: PhpArray;
  headers: IncomingHttpHeaders;
}

/** A page, a redirect or an error page: HTML, never JSON. */
export interface PageReply {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

export interface WpUser {
  id: number;
  login: string;
  password: string;
  displayName: string;
}

/** Who a request's logged_in cookie says is signed in, and the session it belongs to. */
export interface SignedIn {
  user: WpUser;
  token: string;
}

/** The site's name: wp-login.php's title and the logout confirmation name it. */
const SITE_NAME = 'WooCommerce Test Store';
const DAY_SECONDS = 24 * 60 * 60;

/** nocache_headers(): sign-in pages, redirects and errors are never cached. */
export const NO_CACHE = {
  'Cache-Control': 'no-cache, must-revalidate, max-age=0, no-store, private',
  Expires: 'Wed, 11 Jan 1984 05:00:00 GMT',
};

export class WordPress {
  /** The administrator (user 1), the one account that may manage WooCommerce. */
  readonly admin: WpUser;
  /** WP_Session_Tokens: a session per sign-in, until it expires or the user logs out. */
  private readonly sessions = new Map<string, { userId: number; expires: number }>();
  /** The site's salts (wp_salt()): cookies and nonces of one store mean nothing to another. */
  private readonly salt = randomBytes(32).toString('hex');
  private readonly cookieName: string;

  constructor(
    readonly siteUrl: string,
    admin: { login: string; password: string },
    private readonly secure: boolean,
  ) {
    this.admin = { id: 1, ...admin, displayName: admin.login };
    // COOKIEHASH is md5( siteurl ).
    this.cookieName = `wordpress_logged_in_${createHash('md5').update(siteUrl).digest('hex')}`;
  }

  /** wp_validate_auth_cookie( '', 'logged_in' ): the user and session the cookie names, if still valid. */
  currentUser(headers: IncomingHttpHeaders): SignedIn | undefined {
    const cookie = parseCookies(headers.cookie).get(this.cookieName);
    const [login, expiration, token, hmac, ...rest] = cookie?.split('|') ?? [];
    if (rest.length || !hmac || Number(expiration) < nowSeconds()) return undefined;
    if (hmac !== this.cookieHmac(login, expiration, token)) return undefined;
    const session = this.sessions.get(token);
    const user = login === this.admin.login ? this.admin : undefined;
    if (!user || !session || session.userId !== user.id || session.expires < nowSeconds()) return undefined;
    return { user, token };
  }

  /**
   * wp_signon(): checks the credentials as wp_authenticate_username_password() does and, when they
   * match, opens a session and gives the Set-Cookie header of its logged_in cookie (a browser-session
   * cookie unless `remember`, which keeps it 14 days). An error is WordPress's message, in HTML.
   */
  signOn(givenLogin: string, givenPassword: string, remember: boolean): { setCookie: string } | { error: string } {
    // wp_authenticate() trims both before any check.
    const login = givenLogin.trim();
    const password = givenPassword.trim();
    if (!login || !password) {
      return {
        error: [
          ...(login ? [] : ['<strong>Error:</strong> The username field is empty.']),
          ...(password ? [] : ['<strong>Error:</strong> The password field is empty.']),
        ].join('<br />'),
      };
    }
    if (login !== this.admin.login) {
      return {
        error: `<strong>Error:</strong> The username <strong>${escHtml(login)}</strong> is not registered on this site. If you are unsure of your username, try your email address instead.`,
      };
    }
    if (password !== this.admin.password) {
      return {
        error: `<strong>Error:</strong> The password you entered for the username <strong>${escHtml(login)}</strong> is incorrect. <a href="${escUrl(this.lostPasswordUrl)}">Lost your password?</a>`,
      };
    }
    const expires = nowSeconds() + (remember ? 14 : 2) * DAY_SECONDS;
    const token = randomBytes(32).toString('base64').replace(/[^a-zA-Z0-9]/g, '').slice(0, 43);
    this.sessions.set(token, { userId: this.admin.id, expires });
    const value = [login, String(expires), token, this.cookieHmac(login, String(expires), token)].join('|');
    const lifetime = remember ? `; expires=${new Date(expires * 1000).toUTCString()}; Max-Age=${expires - nowSeconds()}` : '';
    return { setCookie: `${this.cookieName}=${urlencode(value)}${lifetime}; path=/${this.secure ? '; secure' : ''}; HttpOnly` };
  }

  /** wp_create_nonce( $action ): ten characters bound to the user, the session and the half-day. */
  createNonce(action: string, who?: SignedIn, tick = nonceTick()): string {
    const hash = createHmac('md5', `${this.salt}nonce`).update(`${tick}|${action}|${who?.user.id ?? 0}|${who?.token ?? ''}`).digest('hex');
    return hash.slice(-12, -2);
  }

  /** wp_verify_nonce(): made in this half-day or the one before, for the same user and session. */
  verifyNonce(nonce: string, action: string, who?: SignedIn): boolean {
    const tick = nonceTick();
    return nonce !== '' && (nonce === this.createNonce(action, who, tick) || nonce === this.createNonce(action, who, tick - 1));
  }

  /** wp_validate_redirect(): an http(s) URL on this site's host (whatever its port), or the fallback. */
  validateRedirect(location: string, fallback: string): string {
    try {
      const target = new URL(location);
      return ['http:', 'https:'].includes(target.protocol) && target.hostname === new URL(this.siteUrl).hostname ? location : fallback;
    } catch {
      return fallback;
    }
  }

  /** wp_logout_url( $redirect ). */
  logoutUrl(redirect: string, who: SignedIn | undefined): string {
    const url = addQueryArg([['redirect_to', urlencode(redirect)]], `${this.siteUrl}/wp-login.php?action=logout`);
    return addQueryArg([['_wpnonce', this.createNonce('log-out', who)]], url);
  }

  /** WooCommerce's wp_lostpassword_url(): the My account page's lost-password endpoint. */
  get lostPasswordUrl(): string {
    return `${this.siteUrl}/my-account/lost-password/`;
  }

  /** wp-login.php: the sign-in form (GET), a sign-in (POST log, pwd, rememberme, redirect_to), or action=logout. */
  loginScreen(req: PageRequest): PageReply {
    const action = str(req.query.get('action')) || 'login';
    const redirectTo = str(req.form.get('redirect_to')) || str(req.query.get('redirect_to'));
    if (action === 'logout') return this.logout(req, redirectTo);
    if (req.method !== 'POST') return this.loginForm(redirectTo);
    const login = str(req.form.get('log'));
    const signed = this.signOn(login, str(req.form.get('pwd')), str(req.form.get('rememberme')) !== '');
    if ('error' in signed) return this.loginForm(redirectTo, login, signed.error);
    return redirect(this.validateRedirect(redirectTo, `${this.siteUrl}/wp-admin/`), { 'Set-Cookie': signed.setCookie });
  }

  /** wp_logout() with a valid nonce, else wp_nonce_ays()'s "Do you really want to log out?". */
  private logout(req: PageRequest, redirectTo: string): PageReply {
    const who = this.currentUser(req.headers);
    if (!this.verifyNonce(str(req.query.get('_wpnonce')), 'log-out', who)) {
      const again = escUrl(this.logoutUrl(redirectTo, who));
      return wpDie(`You are attempting to log out of ${SITE_NAME}</p><p>Do you really want to <a href="${again}">log out</a>?`, 'Something went wrong.', 403);
    }
    if (who) this.sessions.delete(who.token);
    const target = this.validateRedirect(redirectTo, `${this.siteUrl}/wp-login.php?loggedout=true&wp_lang=en_US`);
    return redirect(target, { 'Set-Cookie': `${this.cookieName}=%20; expires=Thu, 01 Jan 1970 00:00:01 GMT; Max-Age=0; path=/` });
  }

  private loginForm(redirectTo: string, login = '', error?: string): PageReply {
    const errorBox = error ? `<div id="login_error" class="notice notice-error"><p>${error}</p></div>` : '';
    return {
      status: 200,
      headers: NO_CACHE,
      body: `<!DOCTYPE html>
<html lang="en-US">
<head>
<meta http-equiv="Content-Type" content="text/html; charset=UTF-8" />
<meta name="viewport" content="width=device-width, initial-scale=1.0" />
<title>Log In &lsaquo; ${escHtml(SITE_NAME)} &#8212; WordPress</title>
<meta name="robots" content="noindex, nofollow" />
<style>
body { background: #f0f0f1; font-family: -apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, sans-serif; font-size: 13px; color: #3c434a; }
#login { width: 320px; margin: 8% auto 0; }
.wp-login-logo { text-align: center; font-size: 20px; }
.wp-login-logo a { color: #3c434a; text-decoration: none; }
#loginform { background: #fff; border: 1px solid #c3c4c7; box-shadow: 0 1px 3px rgba(0, 0, 0, .04); padding: 26px 24px; margin-top: 20px; }
#loginform label { display: block; margin-bottom: 3px; font-size: 14px; }
#loginform .input { width: 100%; box-sizing: border-box; font-size: 24px; padding: 3px 5px; margin: 0 0 16px; }
.button-primary { background: #2271b1; border: 1px solid #2271b1; color: #fff; border-radius: 3px; padding: 0 12px; min-height: 32px; font-size: 13px; cursor: pointer; }
#login_error { background: #fff; border-left: 4px solid #d63638; padding: 12px; margin: 20px 0 0; box-shadow: 0 1px 1px rgba(0, 0, 0, .04); }
</style>
</head>
<body class="login no-js login-action-login wp-core-ui locale-en-us">
<div id="login">
<h1 class="wp-login-logo"><a href="https://wordpress.org/">Powered by WordPress</a></h1>
${errorBox}
<form name="loginform" id="loginform" action="${escUrl(`${this.siteUrl}/wp-login.php`)}" method="post">
<p><label for="user_login">Username or Email Address</label>
<input type="text" name="log" id="user_login" class="input" value="${escHtml(login)}" size="20" autocapitalize="off" autocomplete="username" required="required" /></p>
<div class="user-pass-wrap"><label for="user_pass">Password</label>
<div class="wp-pwd"><input type="password" name="pwd" id="user_pass" class="input password-input" value="" size="20" autocomplete="current-password" spellcheck="false" required="required" /></div></div>
<p class="forgetmenot"><input name="rememberme" type="checkbox" id="rememberme" value="forever" /> <label for="rememberme">Remember Me</label></p>
<p class="submit"><input type="submit" name="wp-submit" id="wp-submit" class="button button-primary button-large" value="Log In" />
<input type="hidden" name="redirect_to" value="${escHtml(redirectTo)}" /><input type="hidden" name="testcookie" value="1" /></p>
</form>
<p id="nav"><a href="${escUrl(this.lostPasswordUrl)}">Lost your password?</a></p>
</div>
</body>
</html>
`,
    };
  }

  private cookieHmac(login: string, expiration: string, token: string): string {
    return createHmac('sha256', `${this.salt}logged_in`).update(`${login}|${expiration}|${token}`).digest('hex');
  }
}

/** wp_redirect(): 302 to the sanitized location. */
export function redirect(location: string, headers: Record<string, string> = {}): PageReply {
  return { status: 302, body: '', headers: { ...NO_CACHE, ...headers, 'X-Redirect-By': 'WordPress', Location: sanitizeRedirect(location) } };
}

/** _default_wp_die_handler(): WordPress's bare error page, `message` already HTML. */
export function wpDie(message: string, title: string, status: number): PageReply {
  return {
    status,
    headers: NO_CACHE,
    body: `<!DOCTYPE html>
<html dir="ltr" lang="en-US">
<head>
	<meta http-equiv="Content-Type" content="text/html; charset=utf-8" />
	<meta name="viewport" content="width=device-width, initial-scale=1.0">
	<meta name="robots" content="noindex, follow" />
	<title>${title}</title>
	<style type="text/css">
		html { background: #f1f1f1; }
		body { background: #fff; border: 1px solid #ccd0d4; color: #444; font-family: -apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, sans-serif; margin: 2em auto; padding: 1em 2em; max-width: 700px; box-shadow: 0 1px 1px rgba(0, 0, 0, .04); }
		#error-page { margin-top: 50px; }
		#error-page .wp-die-message, #error-page p { font-size: 14px; line-height: 1.5; margin: 25px 0 20px; }
	</style>
</head>
<body id="error-page">
	<div class="wp-die-message">${message}</div></body>
</html>
`,
  };
}

/** A request value that PHP would read as a string; an array or a missing one is ''. */
export function str(value: PhpValue | undefined): string {
  return typeof value === 'string' ? value : '';
}

/** $_COOKIE: PHP urldecodes each value, and keeps the first of two cookies with one name. */
function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of header?.split(';') ?? []) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    const name = part.slice(0, eq).trim();
    if (name && !cookies.has(name)) cookies.set(name, urldecode(part.slice(eq + 1).trim()));
  }
  return cookies;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** wp_nonce_tick(): nonces last one to two half-days. */
const nonceTick = () => Math.ceil(nowSeconds() / (DAY_SECONDS / 2));
