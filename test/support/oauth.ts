/** An OAuth app, an owner who approved it, and the access token its code exchange issued: the quick way to a real access token. */
import { createHash, randomBytes } from 'node:crypto';
import { Scope } from '../../server/auth/scopes';
import { TestApp } from './app';

export interface IssuedTokens {
  appId: number;
  accessToken: string;
}

/** Registers an app named `name`, has the business's owner approve `scopes` in test mode, and exchanges the code over HTTP. */
export async function anAuthorizedApp(app: TestApp, businessId: number, name: string, scopes: Scope[]): Promise<IssuedTokens> {
  const services = app.server.services;
  const redirectUri = `https://${name.toLowerCase().replace(/[^a-z]+/g, '-')}.example/cb`;
  const platform = await services.oauthApps.create({ name, redirectUris: [redirectUri] });
  const owner = await services.owners.create({ businessId, email: `owner.${randomBytes(6).toString('hex')}@acme.example`, password: 'a long enough password' });
  const verifier = randomBytes(32).toString('base64url');
  const code = await services.oauthTokens.issueCode({
    appId: platform.id,
    ownerId: owner.id,
    businessId,
    livemode: false,
    scopes,
    redirectUri,
    codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
  });
  const res = await fetch(`${app.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier, client_id: platform.client_id, client_secret: platform.client_secret! }).toString(),
  });
  const body = (await res.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`the code exchange failed: ${res.status} ${JSON.stringify(body)}`);
  return { appId: platform.id, accessToken: body.access_token };
}
