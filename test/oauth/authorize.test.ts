/** `GET /oauth/authorize` over HTTP: errors shown or redirected as RFC 6749 §4.1.2.1 says, and the sign-in throttle. */
import { useApp } from '../support/app';

const ctx = useApp();
const REDIRECT = 'https://platform.example/callback';
let app: { client_id: string };
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

describe('signing in', () => {
  async function signIn(email: string, password: string): Promise<Response> {
    const page = await (await authorize(base())).text();
    const formToken = /name="form_token" value="([^"]+)"/.exec(page)![1];
    return fetch(`${ctx.app.url}/oauth/authorize/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...base(), form_token: formToken, email, password }).toString(),
    });
  }

  test('when the password is right, then a session cookie (HttpOnly, SameSite=Lax) is set and the consent follows', async () => {
    await ctx.app.server.services.owners.create({ businessId: ctx.t.businessId, email: 'right@acme.example', password: 'the right password' });

    const res = await signIn('right@acme.example', 'the right password');

    expect(res.status).toBe(303);
    expect(res.headers.get('set-cookie')).toMatch(/^owner_session=.+; Max-Age=\d+; Path=\/oauth; Expires=.+; HttpOnly; SameSite=Lax$/);
  });

  test('when the owner is signed in, then the consent page names the app, the business, the mode and every scope asked', async () => {
    await ctx.app.server.services.owners.create({ businessId: ctx.t.businessId, email: 'consent@acme.example', password: 'the right password' });
    const cookie = (await signIn('consent@acme.example', 'the right password')).headers.get('set-cookie')!.split(';')[0];

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
});
