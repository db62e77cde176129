/** `GET /oauth/authorize` over HTTP: errors shown or redirected as RFC 6749 §4.1.2.1 says, and the sign-in throttle. */
import { useApp } from '../support/app';

const ctx = useApp();
const REDIRECT = 'https://platform.example/callback';
let app: { client_id: string; client_secret: string | null };
let publicApp: { client_id: string };

beforeAll(async () => {
  app = await ctx.app.server.services.oauthApps.create({ name: 'Platform', redirectUris: [REDIRECT] });
  publicApp = await ctx.app.server.services.oauthApps.create({ name: 'Mobile', redirectUris: [REDIRECT], public: true });
});

function authorize(params: Record<string, string>): Promise<Response> {
  return fetch(`${ctx.app.url}/oauth/authorize?${new URLSearchParams(params).toString()}`, { redirect: 'manual' });
}

const base = () => ({ response_type: 'code', client_id: app.client_id, redirect_uri: REDIRECT, scope: 'clients:read', state: 's-1' });

describe('GET /oauth/authorize', () => {
  test.each([
    ['an unknown client', () => ({ ...base(), client_id: 'app_unknown' })],
    ['an unregistered redirect URI', () => ({ ...base(), redirect_uri: 'https://attacker.example/callback' })],
  ])('when it names %s, then it is a 400 page and never a redirect', async (_case, params) => {
    const res = await authorize(params());

    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
  });

  test.each([
    ['no scope', () => ({ ...base(), scope: '' }), 'invalid_scope'],
    ['an unknown scope', () => ({ ...base(), scope: 'clients:read admin' }), 'invalid_scope'],
    ['another response type', () => ({ ...base(), response_type: 'token' }), 'unsupported_response_type'],
    ['a plain PKCE challenge', () => ({ ...base(), code_challenge: 'x'.repeat(43), code_challenge_method: 'plain' }), 'invalid_request'],
    ['a public app without PKCE', () => ({ ...base(), client_id: publicApp.client_id }), 'invalid_request'],
    ['an unknown mode', () => ({ ...base(), mode: 'staging' }), 'invalid_request'],
  ])('when it has %s, then the app gets the error and its state at its redirect URI', async (_case, params, error) => {
    const res = await authorize(params());

    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(location.searchParams.get('error')).toBe(error);
    expect(location.searchParams.get('state')).toBe('s-1');
  });

  test('when the spec\'s `scopes` is used with commas, then the sign-in page is shown', async () => {
    const { scope: _scope, ...rest } = base();

    const res = await authorize({ ...rest, scopes: 'clients:read,invoices:read' });

    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('Sign in');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('cache-control')).toBe('no-store');
  });
});

/** The sign-in page as a browser gets it: its form token and the pre-sign-in cookie it set. */
async function signInPage(): Promise<{ formToken: string; cookie: string }> {
  const res = await authorize(base());
  const formToken = /name="form_token" value="([^"]+)"/.exec(await res.text())![1];
  return { formToken, cookie: res.headers.get('set-cookie')?.split(';')[0] ?? '' };
}

function postForm(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${ctx.app.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

async function signIn(email: string, password: string): Promise<Response> {
  const { formToken, cookie } = await signInPage();
  return postForm('/oauth/authorize/sign-in', { ...base(), form_token: formToken, email, password }, { cookie });
}

const sessionCookieOf = (res: Response) => res.headers.get('set-cookie')!.split(';')[0];

/** The page `GET /oauth/authorize` shows with this cookie. */
async function pageWith(cookie: string): Promise<string> {
  return (await fetch(`${ctx.app.url}/oauth/authorize?${new URLSearchParams(base()).toString()}`, { headers: { cookie } })).text();
}

const isConsent = (html: string) => html.includes('>Allow<');

describe('signing in', () => {
  test('when the password is right, then a session cookie (HttpOnly, SameSite=Lax) is set and the consent follows', async () => {
    await ctx.app.server.services.owners.create({ businessId: ctx.t.businessId, email: 'right@acme.example', password: 'the right password' });

    const res = await signIn('right@acme.example', 'the right password');

    expect(res.status).toBe(303);
    expect(res.headers.get('set-cookie')).toMatch(/^owner_session=.+; Max-Age=\d+; Path=\/oauth; Expires=.+; HttpOnly; SameSite=Lax$/);
  });

  test('when the owner is signed in, then the consent page names the app, the business, the mode and every scope asked', async () => {
    await ctx.app.server.services.owners.create({ businessId: ctx.t.businessId, email: 'consent@acme.example', password: 'the right password' });
    const cookie = sessionCookieOf(await signIn('consent@acme.example', 'the right password'));

    const res = await fetch(`${ctx.app.url}/oauth/authorize?${new URLSearchParams({ ...base(), scope: 'clients:read invoices:write expenses:read', mode: 'test' }).toString()}`, {
      headers: { cookie },
    });
    const html = await res.text();

    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("form-action 'self' https://platform.example");
    for (const text of ['Allow Platform?', 'Test Business', 'test mode', 'clients:read', 'invoices:write', 'expenses:read', '>Allow<', '>Deny<']) expect(html).toContain(text);
  });

  test('when an account fails five times, then the sixth try is refused even with the right password', async () => {
    await ctx.app.server.services.owners.create({ businessId: ctx.t.businessId, email: 'locked@acme.example', password: 'the right password' });

    const failures = [];
    for (let i = 0; i < 5; i += 1) failures.push((await signIn('locked@acme.example', 'a wrong password')).status);
    const sixth = await signIn('locked@acme.example', 'the right password');

    expect(failures).toEqual([401, 401, 401, 401, 401]);
    expect(sixth.status).toBe(429);
    expect(sixth.headers.get('set-cookie')).toBeNull();
  });

  test.each([
    ['no cookie', (): Promise<Record<string, string>> => Promise.resolve({})],
    ['the victim\'s own pre-sign-in cookie', async (): Promise<Record<string, string>> => ({ cookie: (await signInPage()).cookie })],
  ])('when another site posts a sign-in with the attacker\'s form token and %s, no Sec-Fetch-Site and no Origin, then it is refused and no session starts', async (_case, victimHeaders) => {
    // Arrange: the attacker's own account and a form token fetched with the attacker's cookie
    const email = `attacker.${Date.now()}@evil.example`;
    await ctx.app.server.services.owners.create({ businessId: ctx.t.businessId, email, password: 'the attacker password' });
    const attacker = await signInPage();
    const headers = await victimHeaders();

    // Act: the victim's browser posts the attacker's form (an old browser: no fetch metadata)
    const res = await postForm('/oauth/authorize/sign-in', { ...base(), form_token: attacker.formToken, email, password: 'the attacker password' }, headers);

    // Assert
    expect(res.status).toBe(403);
    expect(res.headers.get('set-cookie') ?? '').not.toContain('owner_session=');
  });

  test('when the sign-in page is shown, then its pre-sign-in cookie is HttpOnly and SameSite=Lax with a random value, kept by a browser that has one', async () => {
    const first = await authorize(base());
    const second = await authorize(base());
    const cookie = first.headers.get('set-cookie')!.split(';')[0];
    const again = await fetch(`${ctx.app.url}/oauth/authorize?${new URLSearchParams(base()).toString()}`, { headers: { cookie } });

    expect(first.headers.get('set-cookie')).toMatch(/^owner_sign_in=[A-Za-z0-9_-]{43}; Max-Age=\d+; Path=\/; Expires=.+; HttpOnly; SameSite=Lax$/);
    expect(cookie).not.toBe(second.headers.get('set-cookie')!.split(';')[0]);
    expect(again.headers.get('set-cookie')).toBeNull();
  });

  test('when the owner signs in, then the cookie\'s Max-Age is the server-side session\'s lifetime', async () => {
    const owner = await ctx.app.server.services.owners.create({ businessId: ctx.t.businessId, email: 'lifetime@acme.example', password: 'the right password' });

    const res = await signIn('lifetime@acme.example', 'the right password');

    const maxAge = Number(/Max-Age=(\d+)/.exec(res.headers.get('set-cookie')!)![1]);
    const session = await ctx.app.db.knex('owner_sessions').where({ owner_id: owner.id }).first();
    const stored = (Date.parse(`${String(session.expires_at).replace(' ', 'T')}Z`) - Date.parse(`${String(session.created_at).replace(' ', 'T')}Z`)) / 1000;
    expect(maxAge).toBe(12 * 3600);
    // created_at is stamped a moment after expires_at is reckoned.
    expect(Math.abs(stored - maxAge)).toBeLessThan(5);
  });
});

describe('signing out', () => {
  async function signedIn(email: string): Promise<{ cookie: string; ownerId: number }> {
    const owner = await ctx.app.server.services.owners.create({ businessId: ctx.t.businessId, email, password: 'the right password' });
    return { cookie: sessionCookieOf(await signIn(email, 'the right password')), ownerId: owner.id };
  }

  const signOutToken = (html: string) => /action="\/oauth\/authorize\/sign-out">[\s\S]*?name="form_token" value="([^"]+)"/.exec(html)![1];

  test('when the owner presses Sign out, then the session ends on the server: the same cookie shows the sign-in page again', async () => {
    // Arrange
    const { cookie } = await signedIn('out@acme.example');
    const consent = await pageWith(cookie);

    // Act
    const res = await postForm('/oauth/authorize/sign-out', { ...base(), form_token: signOutToken(consent) }, { cookie });

    // Assert
    expect(consent).toContain('>Sign out<');
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`/oauth/authorize?${new URLSearchParams(base()).toString()}`);
    expect(res.headers.get('set-cookie')).toMatch(/^owner_session=; .*Expires=Thu, 01 Jan 1970/);
    expect(isConsent(await pageWith(cookie))).toBe(false);
  });

  test('when a sign-out is posted without the page\'s form token, then it is refused and the session goes on', async () => {
    const { cookie } = await signedIn('not-out@acme.example');

    const res = await postForm('/oauth/authorize/sign-out', { ...base(), form_token: 'x' }, { cookie });

    expect(res.status).toBe(403);
    expect(isConsent(await pageWith(cookie))).toBe(true);
  });

  test('when the owner\'s password is reset, then every session of the owner ends and other owners\' go on', async () => {
    // Arrange
    const { cookie: first, ownerId } = await signedIn('reset@acme.example');
    const second = sessionCookieOf(await signIn('reset@acme.example', 'the right password'));
    const { cookie: other } = await signedIn('bystander@acme.example');

    // Act
    await ctx.app.server.services.owners.resetPassword(ownerId, 'a brand new password');

    // Assert
    expect(isConsent(await pageWith(first))).toBe(false);
    expect(isConsent(await pageWith(second))).toBe(false);
    expect(isConsent(await pageWith(other))).toBe(true);
  });
});

describe('the code of an authorize request', () => {
  /** Signs in, allows `params`' request on the consent page, and exchanges the code with `exchange`'s fields. */
  async function allowAndExchange(email: string, params: Record<string, string>, exchange: Record<string, string>): Promise<{ status: number; body: { error?: string; access_token?: string } }> {
    await ctx.app.server.services.owners.create({ businessId: ctx.t.businessId, email, password: 'the right password' });
    const cookie = sessionCookieOf(await signIn(email, 'the right password'));
    const consent = await (await fetch(`${ctx.app.url}/oauth/authorize?${new URLSearchParams(params).toString()}`, { headers: { cookie } })).text();
    const formToken = /action="\/oauth\/authorize\/decision">\s*<input type="hidden" name="form_token" value="([^"]+)"/.exec(consent)![1];
    const allowed = await postForm('/oauth/authorize/decision', { ...params, form_token: formToken, decision: 'allow' }, { cookie });
    const code = new URL(allowed.headers.get('location')!).searchParams.get('code')!;
    const res = await postForm('/oauth/token', { grant_type: 'authorization_code', code, client_id: app.client_id, client_secret: app.client_secret!, ...exchange });
    return { status: res.status, body: (await res.json()) as { error?: string; access_token?: string } };
  }

  test('when the authorize request named no redirect_uri (the app has one), then the exchange needs none (RFC 6749 §4.1.3)', async () => {
    const { redirect_uri: _named, ...params } = base();

    const res = await allowAndExchange('no-redirect@acme.example', params, {});

    expect(res.status).toBe(200);
    expect(res.body.access_token).toMatch(/^oat_live_/);
  });

  test('when the authorize request named its redirect_uri, then an exchange without it is invalid_request', async () => {
    const res = await allowAndExchange('named-redirect@acme.example', base(), {});

    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });
});
