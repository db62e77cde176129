/**
 * `GET /oauth/authorize` and its two forms: the owner signs in, then allows or denies the app for
 * their business in the mode asked. Unknown clients and unregistered redirect URIs get a page;
 * every other outcome goes back to the app's redirect URI (RFC 6749 §4.1.2).
 */
import { Request, Response, Router } from 'express';
import { BusinessService } from '../businesses/service';
import { Database } from '../db/database';
import { FormGuard, parseForm, setHostedPageHeaders } from '../pages/hygiene';
import { refusedFormPage } from '../pages/layout';
import { OwnerService } from '../owners/service';
import { AUTHORIZE_PARAMETERS, AuthorizationRequest, checkAuthorization, redirectWith } from './authorization';
import { authorizeErrorPage, consentPage, signInPage } from './pages';
import { OwnerSession, OwnerSessions, SignInThrottle } from './sign-in';
import { OAuthTokens } from './tokens';

const SIGN_IN = 'oauth sign-in';
const CONSENT = 'oauth consent';
const SIGN_OUT = 'oauth sign-out';

export interface AuthorizeDeps {
  db: Database;
  tokens: OAuthTokens;
  owners: OwnerService;
  businesses: BusinessService;
  forms: FormGuard;
  sessions: OwnerSessions;
  throttle: SignInThrottle;
}

/** The authorize parameters of a query or a form, as strings. */
function parametersOf(source: unknown): Record<string, string> {
  const values = (source ?? {}) as Record<string, unknown>;
  return Object.fromEntries(AUTHORIZE_PARAMETERS.filter((name) => typeof values[name] === 'string').map((name) => [name, values[name] as string]));
}

export function authorizeRoutes(deps: AuthorizeDeps): Router {
  const r = Router();

  /** Checks the request and answers its error (a page or a redirect); the request when it may go on. */
  async function check(res: Response, params: Record<string, string>): Promise<AuthorizationRequest | null> {
    const checked = await checkAuthorization(deps.db, params);
    if (checked.kind === 'ok') {
      setHostedPageHeaders(res, { formAction: [new URL(checked.request.redirectUri).origin] });
      return checked.request;
    }
    setHostedPageHeaders(res);
    if (checked.kind === 'page') res.status(400).type('html').send(authorizeErrorPage(checked.message));
    else res.redirect(302, redirectWith(checked.redirectUri, { error: checked.error, error_description: checked.description, state: checked.state }));
    return null;
  }

  async function showConsent(res: Response, request: AuthorizationRequest, session: OwnerSession, params: Record<string, string>): Promise<void> {
    const owner = await deps.owners.get(session.ownerId);
    const business = await deps.businesses.get(owner.business_id);
    res.type('html').send(
      consentPage({
        appName: request.app.name,
        businessName: business.name,
        ownerEmail: owner.email,
        livemode: request.livemode,
        scopes: request.scopes,
        params,
        formToken: deps.forms.token(CONSENT, consentBinding(session, request)),
        signOutToken: deps.forms.token(SIGN_OUT, session.token),
      }),
    );
  }

  /** The sign-in form's token, bound to the browser's pre-sign-in cookie and the app: another site has neither the cookie nor a token for it. */
  const signInToken = (binding: string, request: AuthorizationRequest) => deps.forms.token(SIGN_IN, `${binding}:${request.app.clientId}`);

  r.get('/oauth/authorize', async (req, res) => {
    const params = parametersOf(req.query);
    const request = await check(res, params);
    if (!request) return;
    const session = await deps.sessions.current(req);
    if (session) return showConsent(res, request, session, params);
    res.type('html').send(signInPage(request.app.name, params, signInToken(deps.sessions.signInBinding(req, res), request)));
  });

  r.post('/oauth/authorize/sign-in', parseForm, async (req: Request, res: Response) => {
    const params = parametersOf(req.body);
    const request = await check(res, params);
    if (!request) return;
    const binding = deps.sessions.signInBindingOf(req);
    if (!binding || !deps.forms.accepts(req, SIGN_IN, `${binding}:${request.app.clientId}`)) return void res.status(403).type('html').send(refusedFormPage());
    const fields = req.body as Record<string, unknown>;
    const email = typeof fields.email === 'string' ? fields.email.trim() : '';
    const password = typeof fields.password === 'string' ? fields.password : '';
    const ip = req.ip ?? 'unknown';
    const again = (status: number, problem: string) =>
      res.status(status).type('html').send(signInPage(request.app.name, params, signInToken(binding, request), problem));
    if (deps.throttle.blocked(email, ip)) return void again(429, 'Too many failed sign-ins. Wait a quarter of an hour and try again.');
    const owner = email && password ? await deps.owners.signIn(email, password) : null;
    if (!owner) {
      deps.throttle.failed(email, ip);
      return void again(401, 'The e-mail or the password is wrong.');
    }
    deps.throttle.succeeded(email);
    await deps.sessions.start(res, owner.id);
    res.redirect(303, authorizeAgain(params));
  });

  r.post('/oauth/authorize/decision', parseForm, async (req: Request, res: Response) => {
    const params = parametersOf(req.body);
    const request = await check(res, params);
    if (!request) return;
    const session = await deps.sessions.current(req);
    if (!session) return void res.redirect(303, authorizeAgain(params));
    if (!deps.forms.accepts(req, CONSENT, consentBinding(session, request))) return void res.status(403).type('html').send(refusedFormPage());
    if ((req.body as Record<string, unknown>).decision !== 'allow') {
      return void res.redirect(303, redirectWith(request.redirectUri, { error: 'access_denied', error_description: 'The owner denied the request', state: request.state }));
    }
    const owner = await deps.owners.get(session.ownerId);
    const code = await deps.tokens.issueCode({
      appId: request.app.id,
      ownerId: session.ownerId,
      businessId: owner.business_id,
      livemode: request.livemode,
      scopes: request.scopes,
      redirectUri: request.namedRedirectUri,
      codeChallenge: request.codeChallenge,
    });
    res.redirect(303, redirectWith(request.redirectUri, { code, state: request.state }));
  });

  /** Ends the session whatever the authorize request, then shows that request again: its sign-in page. */
  r.post('/oauth/authorize/sign-out', parseForm, async (req: Request, res: Response) => {
    setHostedPageHeaders(res);
    const params = parametersOf(req.body);
    const session = await deps.sessions.current(req);
    if (session) {
      if (!deps.forms.accepts(req, SIGN_OUT, session.token)) return void res.status(403).type('html').send(refusedFormPage());
      await deps.sessions.end(res, session);
    }
    res.redirect(303, authorizeAgain(params));
  });
  return r;
}

/** The consent form's token is bound to the session and the app. */
function consentBinding(session: OwnerSession, request: AuthorizationRequest): string {
  return `${session.token}:${request.app.clientId}`;
}

/** Back to the authorize page with the request's own parameters (a path of ours: never another site). */
function authorizeAgain(params: Record<string, string>): string {
  return `/oauth/authorize?${new URLSearchParams(params).toString()}`;
}
