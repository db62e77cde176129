/**
 * WooCommerce's app authorization, reproduced from WC_Auth (plugins/woocommerce/includes/class-wc-auth.php)
 * and its templates (templates/auth/): /wc-auth/v1/authorize sends a signed-out owner to WooCommerce's
 * sign-in form, shows a signed-in one the grant-access page, and /wc-auth/v1/access_granted makes an
 * API key, POSTs it to the app's callback_url and returns the owner to the app's return_url. Every
 * refusal is WooCommerce's wp_die() page (401, "Error: <message>.").
 */
import http from 'node:http';
import https from 'node:https';
import { ApiKeys, KeyPermissions, randHash } from './auth';
import { WP_VERSION } from './orders';
import { addQueryArg, escHtml, escUrl, isValidUrl, PhpArray, phpEmpty, rawurlencode, urldecode, wcClean, wpJsonEncode } from './php';
import { NO_CACHE, PageReply, PageRequest, redirect, SignedIn, str, WordPress, wpDie } from './wordpress';

export interface WcAuthOptions {
  /** Take an http:// callback_url, which WooCommerce refuses ("The callback_url needs to be over SSL"). */
  allowHttpCallback: boolean;
  /** PEM certificate(s) to trust for an https callback_url, besides Node's usual CAs. */
  callbackCa?: string;
}

/** One POST of a new key to an app's callback_url, with what came back. */
export interface CallbackAttempt {
  url: string;
  headers: Record<string, string>;
  /** The JSON exactly as sent: {key_id, user_id, consumer_key, consumer_secret, key_permissions}. */
  body: string;
  /** The key sent; it was deleted again unless `status` is 200. */
  keyId: number;
  /** The callback's status code; null when it could not be reached or did not answer within 60 s. */
  status: number | null;
  /** Why there is no status, in the words WordPress's HTTP API (cURL) would use. */
  error?: string;
  at: Date;
}

/** The five handshake parameters, as the request gave them. */
interface Handshake {
  app_name: string;
  user_id: string;
  return_url: string;
  callback_url: string;
  scope: KeyPermissions;
}

const HANDSHAKE = ['app_name', 'user_id', 'return_url', 'callback_url', 'scope'] as const;
const SCOPES: KeyPermissions[] = ['read', 'write', 'read_write'];
/** post_consumer_data() gives the callback 60 seconds. */
const CALLBACK_TIMEOUT_MS = 60_000;

/** What WC_Auth throws: shown as "Error: <message>." on a 401 page. */
class Refusal extends Error {}

/** add_endpoint()'s rewrite rule ^wc-auth/v([1]{1})/(.*)?, on the path WordPress trimmed of slashes: the route, if it is one. */
export function wcAuthRoute(path: string): string | undefined {
  return /^wc-auth\/v1\/(.*)$/s.exec(path.replace(/^\/+|\/+$/g, ''))?.[1];
}

export class WcAuth {
  readonly callbacks: CallbackAttempt[] = [];
  private readonly inFlight = new Set<http.ClientRequest>();

  constructor(
    private readonly wp: WordPress,
    private readonly keys: ApiKeys,
    private readonly options: WcAuthOptions,
  ) {}

  /** handle_auth_requests() for /wc-auth/v1/<route>, after WC_Form_Handler::process_login() had its turn. */
  async handle(route: string, req: PageRequest): Promise<PageReply> {
    const who = this.wp.currentUser(req.headers);
    const notices: string[] = [];
    if (req.method === 'POST') {
      const signedIn = this.processLogin(req, who, notices);
      if (signedIn) return signedIn;
    }
    let keyId: number | undefined;
    try {
      // $_REQUEST: the query string, with the POST body over it.
      const data = this.validate(new Map([...req.query, ...req.form]));
      const endpoint = wcClean(route).toLowerCase();
      if (endpoint === 'login') {
        return who ? redirect(escUrl(this.buildUrl(data, 'authorize'), 'raw')) : this.loginPage(data, str(req.form.get('username')), notices);
      }
      if (endpoint === 'authorize') {
        return who ? this.grantPage(data, who) : redirect(escUrl(this.buildUrl(data, 'login'), 'raw'));
      }
      if (endpoint === 'access_granted' && who) {
        const nonce = str(req.query.get('wc_auth_nonce'))
          .toLowerCase()
          .replace(/[^a-z0-9_-]/g, '');
        if (!req.query.has('wc_auth_nonce') || !this.wp.verifyNonce(nonce, 'wc_auth_grant_access', who)) {
          throw new Refusal('Invalid nonce verification');
        }
        const consumerData = this.createKeys(data, who);
        keyId = consumerData.key_id;
        await this.postConsumerData(consumerData, formattedUrl(data.callback_url));
        return redirect(escUrl(addQueryArg([['success', '1'], ['user_id', wcClean(data.user_id)]], formattedUrl(data.return_url)), 'raw'));
      }
      throw new Refusal('You do not have permission to access this page');
    } catch (e) {
      if (!(e instanceof Refusal)) throw e;
      // maybe_delete_key(): a key whose callback failed must not stay usable.
      if (keyId !== undefined) this.keys.delete(keyId);
      return wpDie(`Error: ${escHtml(e.message)}.`, 'Access denied', 401);
    }
  }

  /** Aborts callbacks under way: the store is going away. */
  stop(): void {
    for (const req of this.inFlight) req.destroy();
  }

  /**
   * WC_Form_Handler::process_login(), which WooCommerce runs on every front-end POST: the sign-in
   * form's fields and its nonce, then wp_signon(). A success redirects to the form's `redirect`
   * (the authorize URL); a failure leaves a notice for the sign-in page to show.
   */
  private processLogin(req: PageRequest, who: SignedIn | undefined, notices: string[]): PageReply | undefined {
    const request = new Map([...req.query, ...req.form]);
    const nonce = str(request.get('woocommerce-login-nonce')) || str(request.get('_wpnonce'));
    if (!['login', 'username', 'password'].every((name) => req.form.has(name)) || !this.wp.verifyNonce(nonce, 'woocommerce-login', who)) {
      return undefined;
    }
    const username = str(req.form.get('username')).trim();
    if (!username) {
      notices.push('<strong>Error:</strong> Username is required.');
      return undefined;
    }
    const signed = this.wp.signOn(username, str(req.form.get('password')), req.form.has('rememberme'));
    if ('error' in signed) {
      notices.push(signed.error);
      return undefined;
    }
    const myAccount = `${this.wp.siteUrl}/my-account/`;
    const target = str(req.form.get('redirect')) || str(req.headers.referer) || myAccount;
    return redirect(this.wp.validateRedirect(target, myAccount), { 'Set-Cookie': signed.setCookie });
  }

  /** make_validation(): every parameter present and a string, a known scope, two valid URLs, and a callback over SSL. */
  private validate(request: PhpArray): Handshake {
    for (const name of HANDSHAKE) {
      const value = request.get(name);
      if (phpEmpty(value)) throw new Refusal(`Missing parameter ${name}`);
      if (typeof value !== 'string') throw new Refusal(`Invalid parameter ${name}`);
    }
    const data = Object.fromEntries(HANDSHAKE.map((name) => [name, str(request.get(name))])) as unknown as Handshake;
    if (!SCOPES.includes(data.scope)) throw new Refusal(`Invalid scope ${wcClean(data.scope)}`);
    for (const name of ['return_url', 'callback_url'] as const) {
      const url = formattedUrl(data[name]);
      if (!isValidUrl(url)) throw new Refusal(`The ${url} is not a valid URL`);
    }
    const callback = formattedUrl(data.callback_url).toLowerCase();
    const overHttp = this.options.allowHttpCallback && callback.startsWith('http://');
    if (!callback.startsWith('https://') && !overHttp) throw new Refusal('The callback_url needs to be over SSL');
    return data;
  }

  /**
   * build_url(): the endpoint as wc_get_endpoint_url() writes it under WordPress's default (pretty,
   * slash-ended) permalinks, e.g. /wc-auth/v1/authorize/?app_name=…, the two URLs rawurlencoded.
   */
  private buildUrl(data: Handshake, endpoint: string): string {
    return addQueryArg(
      [
        ['app_name', wcClean(data.app_name)],
        ['user_id', wcClean(data.user_id)],
        ['return_url', rawurlencode(formattedUrl(data.return_url))],
        ['callback_url', rawurlencode(formattedUrl(data.callback_url))],
        ['scope', wcClean(data.scope)],
      ],
      `${this.wp.siteUrl}/wc-auth/v1/${endpoint}/`,
    );
  }

  /** The Deny and "cancel" link: the app's return_url with success=0 and its user_id. */
  private deniedUrl(data: Handshake): string {
    return addQueryArg([['success', '0'], ['user_id', wcClean(data.user_id)]], formattedUrl(data.return_url));
  }

  /** templates/auth/form-login.php. */
  private loginPage(data: Handshake, username: string, notices: string[]): PageReply {
    const appName = escHtml(wcClean(data.app_name));
    return page(`
<h1>
	${appName} would like to connect to your store</h1>
${printNotices(notices)}
<p>
	To connect to ${appName} you need to be logged in. Log in to your store below, or <a href="${escUrl(this.deniedUrl(data))}">cancel and return to ${appName}</a></p>

<form method="post" class="wc-auth-login">
	<p class="form-row form-row-wide">
		<label for="username">Username or email address&nbsp;<span class="required">*</span></label>
		<input type="text" class="input-text" name="username" id="username" value="${escHtml(username)}" />
	</p>
	<p class="form-row form-row-wide">
		<label for="password">Password&nbsp;<span class="required">*</span></label>
		<input class="input-text" type="password" name="password" id="password" />
	</p>
	<p class="wc-auth-actions">
		<input type="hidden" id="woocommerce-login-nonce" name="woocommerce-login-nonce" value="${this.wp.createNonce('woocommerce-login')}" />
		<button type="submit" class="button button-large button-primary wc-auth-login-button wp-element-button" name="login" value="Login">Login</button>
		<input type="hidden" name="redirect" value="${escUrl(this.buildUrl(data, 'authorize'))}" />
	</p>
</form>
`);
  }

  /** templates/auth/form-grant-access.php. */
  private grantPage(data: Handshake, who: SignedIn): PageReply {
    const appName = escHtml(wcClean(data.app_name));
    const grantedUrl = addQueryArg([['wc_auth_nonce', this.wp.createNonce('wc_auth_grant_access', who)]], this.buildUrl(data, 'access_granted'));
    const logoutUrl = this.wp.logoutUrl(this.buildUrl(data, 'login'), who);
    return page(`
<h1>
	${appName} would like to connect to your store</h1>

<p>
	This will give &quot;<strong>${appName}</strong>&quot; <strong>${SCOPE_NAMES[data.scope]}</strong> access which will allow it to:</p>

<ul class="wc-auth-permissions">
${PERMISSIONS_IN_SCOPE[data.scope].map((permission) => `	<li>${escHtml(permission)}</li>`).join('\n')}
</ul>

<div class="wc-auth-logged-in-as">
	<p>
		Logged in as ${escHtml(who.user.displayName)}		<a href="${escUrl(logoutUrl)}" class="wc-auth-logout">Logout</a>
	</p>
</div>

<p class="wc-auth-actions">
	<a href="${escUrl(grantedUrl)}" class="button button-primary wc-auth-approve">Approve</a>
	<a href="${escUrl(this.deniedUrl(data))}" class="button wc-auth-deny">Deny</a>
</p>
`);
  }

  /** create_keys(): a key for the signed-in user, described after the app; the callback gets the app's own user_id. */
  private createKeys(data: Handshake, who: SignedIn) {
    const appName = wcClean(data.app_name);
    const consumerKey = `ck_${randHash()}`;
    const consumerSecret = `cs_${randHash()}`;
    const key = this.keys.add({
      userId: who.user.id,
      description: `${appName.length > 170 ? `${appName.slice(0, 167)}...` : appName} - API (${new Date().toISOString().slice(0, 19).replace('T', ' ')})`,
      permissions: data.scope,
      consumerKey,
      consumerSecret,
    });
    return { key_id: key.id, user_id: data.user_id, consumer_key: consumerKey, consumer_secret: consumerSecret, key_permissions: data.scope };
  }

  /** post_consumer_data(): wp_safe_remote_post() of the JSON, 60 s; anything but a 200 is a failure. */
  private async postConsumerData(consumerData: ReturnType<WcAuth['createKeys']>, callbackUrl: string): Promise<void> {
    const url = escUrl(callbackUrl, 'raw');
    const body = wpJsonEncode(consumerData);
    const headers = { 'Content-Type': 'application/json;charset=UTF-8', 'User-Agent': `WordPress/${WP_VERSION}; ${this.wp.siteUrl}` };
    const attempt: CallbackAttempt = { url, headers, body, keyId: consumerData.key_id, status: null, at: new Date() };
    this.callbacks.push(attempt);
    const answer = await this.post(url, headers, body);
    if ('error' in answer) {
      attempt.error = answer.error;
      throw new Refusal(answer.error);
    }
    attempt.status = answer.status;
    if (answer.status !== 200) throw new Refusal('An error occurred in the request and at the time were unable to send the consumer data');
  }

  /** One POST, no redirect followed, no connection kept; a failure is told as cURL would tell WordPress. */
  private post(url: string, headers: Record<string, string>, body: string): Promise<{ status: number } | { error: string }> {
    return new Promise((resolve) => {
      let target: URL;
      try {
        target = new URL(url);
      } catch {
        return resolve({ error: 'A valid URL was not provided.' });
      }
      const send = target.protocol === 'https:' ? https.request : http.request;
      const tls = target.protocol === 'https:' && this.options.callbackCa ? { ca: this.options.callbackCa } : {};
      const req = send(target, { method: 'POST', agent: false, headers: { ...headers, 'Content-Length': Buffer.byteLength(body) }, ...tls });
      this.inFlight.add(req);
      const timer = setTimeout(() => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })), CALLBACK_TIMEOUT_MS);
      let done = false;
      const finish = (answer: { status: number } | { error: string }) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        this.inFlight.delete(req);
        resolve(answer);
      };
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => finish({ status: res.statusCode ?? 0 }));
        res.on('error', (e) => finish({ error: curlError(e, target) }));
      });
      req.on('error', (e) => finish({ error: curlError(e, target) }));
      req.end(body);
    });
  }
}

/** get_formatted_url(): urldecode()d once more, and https:// put in front when there is no scheme. */
function formattedUrl(url: string): string {
  const decoded = urldecode(url);
  return decoded.includes('://') ? decoded : `https://${decoded}`;
}

/** get_i18n_scope(). */
const SCOPE_NAMES: Record<KeyPermissions, string> = { read: 'Read', write: 'Write', read_write: 'Read/Write' };

/** get_permissions_in_scope(). */
const PERMISSIONS_IN_SCOPE: Record<KeyPermissions, string[]> = {
  read: ['View coupons', 'View customers', 'View orders and sales reports', 'View products'],
  write: ['Create webhooks', 'Create coupons', 'Create customers', 'Create orders', 'Create products'],
  read_write: [
    'Create webhooks',
    'View and manage coupons',
    'View and manage customers',
    'View and manage orders and sales reports',
    'View and manage products',
  ],
};

/** wc_print_notices() for error notices (templates/notices/error.php). */
function printNotices(notices: string[]): string {
  if (!notices.length) return '';
  return `<ul class="woocommerce-error" role="alert">\n${notices.map((n) => `\t\t<li>\n\t\t\t${n}\t\t</li>`).join('\n')}\n\t</ul>\n`;
}

/** templates/auth/header.php and footer.php around a page; auth.css's look, inline. */
function page(content: string): PageReply {
  return {
    status: 200,
    headers: NO_CACHE,
    body: `<!DOCTYPE html>
<html lang="en-US">
<head>
	<meta name="viewport" content="width=device-width" />
	<meta http-equiv="Content-Type" content="text/html; charset=utf-8" />
	<meta name="robots" content="noindex, nofollow" />
	<title>Application authentication request</title>
	<style>
		body { background: #f1f1f1; box-shadow: none; margin: 100px auto 24px; padding: 0; max-width: 700px; color: #444; font-family: -apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, sans-serif; font-size: 13px; line-height: 1.4; }
		#wc-logo { border: 0; margin: 0 0 24px; padding: 0; text-align: center; color: #7f54b3; font-size: 32px; }
		.wc-auth-content { background: #fff; box-shadow: 0 1px 3px rgba(0, 0, 0, .13); padding: 24px 24px 0; overflow: hidden; }
		.wc-auth-content h1 { font-size: 22px; margin: 0 0 16px; }
		.wc-auth-permissions { list-style: disc inside; border: 1px solid #eee; padding: 12px 24px; margin: 0 0 24px; }
		.wc-auth-logged-in-as { background: #f5f5f5; border-top: 1px solid #eee; margin: 0 -24px; padding: 0 24px; line-height: 70px; }
		.wc-auth-logged-in-as p { margin: 0; }
		.wc-auth-logout { float: right; }
		.wc-auth-actions { overflow: hidden; padding: 16px 24px; margin: 0 -24px; }
		.wc-auth-actions .button { display: inline-block; min-width: 45%; text-align: center; padding: 8px 0; border-radius: 3px; border: 1px solid #ccc; background: #f7f7f7; color: #555; text-decoration: none; font-size: 14px; cursor: pointer; }
		.wc-auth-actions .button-primary { background: #7f54b3; border-color: #7f54b3; color: #fff; }
		.wc-auth-actions .wc-auth-deny { float: right; }
		.wc-auth-login .input-text { width: 100%; box-sizing: border-box; padding: 6px; font-size: 16px; }
		.wc-auth-login label { display: block; margin-bottom: 4px; }
		.woocommerce-error { background: #f8e0e0; border-left: 4px solid #b81c23; list-style: none; padding: 12px 16px; margin: 0 0 16px; }
	</style>
</head>
<body class="wc-auth wp-core-ui">
	<h1 id="wc-logo">WooCommerce</h1>
	<div class="wc-auth-content">
${content}
		</div>
	</body>
</html>
`,
  };
}

/** The words WordPress's Requests/cURL transport gives a failed request. */
function curlError(e: Error & { code?: string }, target: URL): string {
  const port = target.port || (target.protocol === 'https:' ? '443' : '80');
  if (e.code === 'ECONNREFUSED') return `cURL error 7: Failed to connect to ${target.hostname} port ${port} after 0 ms: Couldn't connect to server`;
  if (e.code === 'ETIMEDOUT') return `cURL error 28: Operation timed out after ${CALLBACK_TIMEOUT_MS} milliseconds with 0 bytes received`;
  if (e.code === 'ECONNRESET') return 'cURL error 56: Recv failure: Connection reset by peer';
  if (e.code?.includes('CERT') || e.code?.includes('SELF_SIGNED')) return `cURL error 60: SSL certificate problem: ${e.message}`;
  return `cURL error: ${e.message}`;
}
