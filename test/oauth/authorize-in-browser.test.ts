/**
 * A platform connects a business with a standard OAuth client (oauth4webapi): authorize URL with
 * PKCE and state, the owner's sign-in and consent in Debian chromium, the code exchange, API calls
 * with the token, refresh, reuse of an old refresh token revoking the grant, revocation.
 */
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import type * as OAuth from 'oauth4webapi';
import { aClient, startApp, Tenant, TestApp } from '../support/app';
import { screenshot, screenshotOnPhone, useBrowser } from '../support/browser';
import { Api } from '../support/http';
import { freePort } from '../support/net';

const ctx = useBrowser();
const PASSWORD = 'a long owner password';
let oauth: typeof OAuth;
let app: TestApp;
let t: Tenant;
let ownerEmail: string;
/** The platform's callback: it only records where the browser came back to. */
let callback: Server;
let redirectUri: string;
let platform: { client_id: string; client_secret: string | null };

beforeAll(async () => {
  oauth = await import('oauth4webapi');
  const port = await freePort();
  app = await startApp({ port, baseUrl: `http://127.0.0.1:${port}`, keyCacheTtlMs: 0 });
  t = await app.tenant();
  ownerEmail = `owner.${Date.now()}@acme.example`;
  await app.server.services.owners.create({ businessId: t.businessId, email: ownerEmail, password: PASSWORD });
  callback = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Platform: connected</h1>'));
  await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
  redirectUri = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
  platform = await app.server.services.oauthApps.create({ name: 'Acme Platform', redirectUris: [redirectUri] });
});
afterAll(async () => {
  await new Promise((resolve) => callback?.close(resolve));
  await app?.stop();
});

const server = (): OAuth.AuthorizationServer => ({
  issuer: app.url,
  authorization_endpoint: `${app.url}/oauth/authorize`,
  token_endpoint: `${app.url}/oauth/token`,
  revocation_endpoint: `${app.url}/oauth/revoke`,
});
const client = (): OAuth.Client => ({ client_id: platform.client_id });
const insecure = () => ({ [oauth.allowInsecureRequests]: true });

/** Sends the owner through sign-in and consent; returns the URL the browser came back to. */
async function authorizeInBrowser(scope: string, decision: 'Allow' | 'Deny', shots = false): Promise<{ returned: URL; state: string; verifier: string }> {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(server().authorization_endpoint!);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: platform.client_id,
    redirect_uri: redirectUri,
    scope,
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    mode: 'test',
  }).toString();
  const page = await ctx.browser.newPage();
  await page.goto(url.toString());
  if (shots) {
    await screenshot(page, 'oauth-sign-in');
    await screenshotOnPhone(ctx.browser, url.toString(), 'oauth-sign-in');
  }
  await page.getByLabel('Email').fill(ownerEmail);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Allow' }).waitFor();
  if (shots) await screenshot(page, 'oauth-consent');
  await page.getByRole('button', { name: decision }).click();
  await page.waitForURL((target) => target.toString().startsWith(redirectUri));
  const returned = new URL(page.url());
  await page.close();
  return { returned, state, verifier };
}

describe('a platform connects a business through the browser', () => {
  test('when the owner signs in and allows, then the code exchange gives tokens that act for the business within the scopes, in test mode', async () => {
    // Arrange / Act
    const { returned, state, verifier } = await authorizeInBrowser('clients:read invoices:read', 'Allow', true);
    const params = oauth.validateAuthResponse(server(), client(), returned, state);
    const response = await oauth.authorizationCodeGrantRequest(server(), client(), oauth.ClientSecretBasic(platform.client_secret!), params, redirectUri, verifier, insecure());
    const tokens = await oauth.processAuthorizationCodeResponse(server(), client(), response);
    const api = new Api(app.url, tokens.access_token);

    // Assert
    expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: 3600, scope: 'clients:read invoices:read', business_id: t.businessId, livemode: false });
    expect((await api.get('/ping')).body).toMatchObject({ business: { id: t.businessId }, livemode: false });
    expect((await api.get('/clients')).status).toBe(200);
    expect((await api.post('/clients', aClient())).status).toBe(403);
  });

  test('when the token is refreshed, the old refresh token reused, and a token revoked, then access ends as RFC 6749 and 7009 say', async () => {
    // Arrange
    const auth = oauth.ClientSecretBasic(platform.client_secret!);
    const { returned, state, verifier } = await authorizeInBrowser('clients:read', 'Allow');
    const first = await oauth.processAuthorizationCodeResponse(
      server(),
      client(),
      await oauth.authorizationCodeGrantRequest(server(), client(), auth, oauth.validateAuthResponse(server(), client(), returned, state), redirectUri, verifier, insecure()),
    );

    // Act: refresh, then present the first refresh token again
    const refreshed = await oauth.processRefreshTokenResponse(server(), client(), await oauth.refreshTokenGrantRequest(server(), client(), auth, first.refresh_token!, insecure()));
    const reuse = oauth.processRefreshTokenResponse(server(), client(), await oauth.refreshTokenGrantRequest(server(), client(), auth, first.refresh_token!, insecure()));

    // Assert
    await expect(reuse).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await new Api(app.url, refreshed.access_token).get('/ping')).status).toBe(401);

    // Act: a fresh connection, then revocation of its access token
    const again = await authorizeInBrowser('clients:read', 'Allow');
    const tokens = await oauth.processAuthorizationCodeResponse(
      server(),
      client(),
      await oauth.authorizationCodeGrantRequest(server(), client(), auth, oauth.validateAuthResponse(server(), client(), again.returned, again.state), redirectUri, again.verifier, insecure()),
    );
    await oauth.processRevocationResponse(await oauth.revocationRequest(server(), client(), auth, tokens.access_token, insecure()));

    // Assert
    expect((await new Api(app.url, tokens.access_token).get('/ping')).status).toBe(401);
  });

  test('when the owner denies, then the platform gets access_denied with its state', async () => {
    const { returned, state } = await authorizeInBrowser('clients:read', 'Deny');

    expect(returned.searchParams.get('error')).toBe('access_denied');
    expect(returned.searchParams.get('state')).toBe(state);
    expect(returned.searchParams.get('code')).toBeNull();
  });
});
