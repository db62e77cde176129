/**
 * A platform connects a business with a standard OAuth client (oauth4webapi): authorize URL with
 * PKCE and state, the owner's sign-in and consent in Debian chromium, the code exchange, API calls
 * with the token, refresh, reuse of an old refresh token revoking the grant, revocation.
 */
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import type * as OAuth from 'oauth4webapi';
import { aClient, startApp, Tenant, TestApp } from '../support/app';
import { PHONE, screenshot, screenshotOnPhone, useBrowser } from '../support/browser';
import { signBody } from '../../server/webhooks/signing';
import { eventually } from '../support/eventually';
import { Api } from '../support/http';
import { startReceiver } from '../support/receiver';
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

/** Sends an owner (by default the first business's) through sign-in and consent; returns the URL the browser came back to. */
async function authorizeInBrowser(
  scope: string,
  decision: 'Allow' | 'Deny',
  shots = false,
  who: { clientId: string; email: string } = { clientId: platform.client_id, email: ownerEmail },
): Promise<{ returned: URL; state: string; verifier: string }> {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(server().authorization_endpoint!);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: who.clientId,
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
  await page.getByLabel('Email').fill(who.email);
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

describe('signing out', () => {
  test('when the signed-in owner presses Sign out on the consent page, then the sign-in page is shown and coming back to the consent asks to sign in again', async () => {
    // Arrange: signed in, on the consent page
    const url = new URL(server().authorization_endpoint!);
    url.search = new URLSearchParams({ response_type: 'code', client_id: platform.client_id, redirect_uri: redirectUri, scope: 'clients:read invoices:read', state: 'st', mode: 'test' }).toString();
    const page = await ctx.browser.newPage();
    await page.goto(url.toString());
    await page.getByLabel('Email').fill(ownerEmail);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const signOut = page.getByRole('button', { name: 'Sign out' });
    await signOut.waitFor();
    await screenshot(page, 'oauth-consent-sign-out');
    await page.setViewportSize(PHONE);
    await screenshot(page, 'oauth-consent-sign-out-phone');

    // Act
    await signOut.click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.goto(url.toString());

    // Assert
    expect(await page.getByRole('button', { name: 'Sign in' }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Allow' }).count()).toBe(0);
    await page.close();
  });
});

describe('an app connected to two businesses', () => {
  test('when both businesses authorize it, then its webhook receives both businesses\' events signed with its secret, and a revoked grant stops them', async () => {
    // Arrange: an app with a webhook, and a second business with its owner
    const receiver = await startReceiver();
    const withHook = await app.server.services.oauthApps.create({ name: 'Hooked Platform', redirectUris: [redirectUri], webhookUrl: receiver.url });
    const second = await app.tenant();
    const secondEmail = `second.${Date.now()}@acme.example`;
    await app.server.services.owners.create({ businessId: second.businessId, email: secondEmail, password: PASSWORD });
    const auth = oauth.ClientSecretBasic(withHook.client_secret!);
    const hookedClient: OAuth.Client = { client_id: withHook.client_id };
    const connect = async (email: string) => {
      const { returned, state, verifier } = await authorizeInBrowser('invoices:write payments:write clients:write', 'Allow', false, { clientId: withHook.client_id, email });
      const params = oauth.validateAuthResponse(server(), hookedClient, returned, state);
      return oauth.processAuthorizationCodeResponse(server(), hookedClient, await oauth.authorizationCodeGrantRequest(server(), hookedClient, auth, params, redirectUri, verifier, insecure()));
    };
    const tokens = [await connect(ownerEmail), await connect(secondEmail)];

    try {
      // Act: each business's invoice is paid through the platform's token
      const paidInvoices: number[] = [];
      for (const token of tokens) {
        const api = new Api(app.url, token.access_token);
        const client = (await api.post('/clients', aClient())).body.client;
        const invoice = (await api.post('/invoices', { client_id: client.id, items: [{ description: 'Work', quantity: 1, unit_price: 10 }] })).body.invoice;
        await api.post(`/invoices/${invoice.id}/initiate-payment`);
        expect((await api.post(`/invoices/${invoice.id}/simulate-payment`)).status).toBe(201);
        paidInvoices.push(invoice.id);
      }
      await eventually(() => receiver.received.filter((r) => r.body.type === 'invoice.paid').length === 2);

      // Assert
      const paid = receiver.received.filter((r) => r.body.type === 'invoice.paid');
      expect(paid.map((r) => r.body.business_id).sort()).toEqual([t.businessId, second.businessId].sort());
      for (const delivery of paid) {
        expect(delivery.headers['x-service-signature']).toBe(signBody(delivery.raw, withHook.webhook_secret!));
      }
      // The receiver answers before the worker records the attempt: wait for the record.
      const deliveries = () => new Api(app.url, tokens[1].access_token).get('/webhook-deliveries?event=invoice.paid');
      await eventually(async () => (await deliveries()).body.data[0]?.status === 'succeeded');
      expect((await deliveries()).body.data).toEqual([expect.objectContaining({ app_id: withHook.id, api_key_id: null, status: 'succeeded' })]);

      // Act: the second business revokes its grant; a new event of it reaches the app no more
      const [grant] = await app.server.services.oauthGrants.list(second.businessId);
      await app.server.services.oauthGrants.revoke(grant.id);
      const before = receiver.received.length;
      const draftFor = async (tenant: Tenant) => {
        const client = (await tenant.api.post('/clients', aClient())).body.client;
        return (await tenant.api.post('/invoices', { client_id: client.id, items: [{ description: 'More work', quantity: 1, unit_price: 5 }] })).body.invoice.id as number;
      };
      const revokedOnes = await draftFor(second);
      const stillConnected = await draftFor(t);
      await eventually(() => receiver.received.slice(before).some((r) => r.body.data.invoice?.id === stillConnected));

      // Assert
      expect(receiver.received.slice(before).some((r) => r.body.data.invoice?.id === revokedOnes)).toBe(false);
      expect(paidInvoices).toHaveLength(2);
      expect((await new Api(app.url, tokens[1].access_token).get('/ping')).status).toBe(401);
    } finally {
      await receiver.stop();
    }
  });
});

