/**
 * What the `/oauth/authorize` pages do: show the request (sign-in or consent), sign the owner in,
 * take the owner's decision, sign out. Each action checks the authorize request first, then calls
 * the owner, business and OAuth token services; view.ts turns what happened into the answer.
 */
import { BusinessService } from '../businesses/service';
import { Database } from '../db/database';
import { AuthorizationRequest, checkAuthorization, redirectWith } from '../oauth/authorization';
import { OwnerSession, OwnerSessions, SignInThrottle } from '../oauth/sign-in';
import { OAuthTokens } from '../oauth/tokens';
import { OwnerService } from '../owners/service';
import { PageContext, PageForms } from '../pages/route';
import { AuthorizeParameters } from './schema';

const SIGN_IN = 'oauth sign-in';
const CONSENT = 'oauth consent';
const SIGN_OUT = 'oauth sign-out';

/**
 * What an action did. `checked`: the authorize request it went on with, whose redirect URI the
 * page's forms may end up at; absent when the check failed or the action checks none (sign-out).
 */
export type AuthorizeOutcome = { checked?: AuthorizationRequest } & (
  /** An unknown app or redirect URI: said on a page, never redirected to (RFC 6749 §4.1.2.1). */
  | { kind: 'cannot_go_on'; message: string }
  /** Any other problem with the request, sent back to the app's redirect URI. */
  | { kind: 'request_refused'; location: string }
  | { kind: 'sign_in'; checked: AuthorizationRequest; params: AuthorizeParameters; formToken: string; problem?: { status: 401 | 429; message: string } }
  | { kind: 'consent'; checked: AuthorizationRequest; params: AuthorizeParameters; businessName: string; ownerEmail: string; formToken: string; signOutToken: string }
  /** A form post that did not come from its page. */
  | { kind: 'refused' }
  /** Back to the authorize page with the same parameters: signed in, signed out, or the session ended meanwhile. */
  | { kind: 'again'; params: AuthorizeParameters }
  /** The owner allowed (a code) or denied: back to the app. */
  | { kind: 'decided'; location: string }
);

export class AuthorizePages {
  constructor(
    private readonly deps: {
      db: Database;
      tokens: OAuthTokens;
      owners: OwnerService;
      businesses: BusinessService;
      sessions: OwnerSessions;
      throttle: SignInThrottle;
    },
  ) {}

  /** `GET /oauth/authorize`: the consent page for a signed-in owner, the sign-in page otherwise. */
  async show(params: AuthorizeParameters, context: PageContext): Promise<AuthorizeOutcome> {
    const checked = await this.check(params);
    if ('refusal' in checked) return checked.refusal;
    const request = checked.request;
    const session = await this.deps.sessions.current(context.cookies);
    if (session) return this.consent(request, session, params, context.forms);
    return { kind: 'sign_in', checked: request, params, formToken: signInToken(context.forms, this.deps.sessions.signInBinding(context.cookies), request) };
  }

  async signIn(params: AuthorizeParameters, credentials: { email: string; password: string }, context: PageContext): Promise<AuthorizeOutcome> {
    const checked = await this.check(params);
    if ('refusal' in checked) return checked.refusal;
    const request = checked.request;
    const { sessions, throttle, owners } = this.deps;
    const binding = sessions.signInBindingOf(context.cookies);
    if (!binding || !context.forms.accepts(SIGN_IN, signInBindingFor(binding, request))) return { kind: 'refused', checked: request };
    const { email, password } = credentials;
    const ip = context.requester.ip ?? 'unknown';
    const again = (status: 401 | 429, message: string): AuthorizeOutcome => ({
      kind: 'sign_in', checked: request, params, formToken: signInToken(context.forms, binding, request), problem: { status, message },
    });
    if (throttle.blocked(email, ip)) return again(429, 'Too many failed sign-ins. Wait a quarter of an hour and try again.');
    const owner = email && password ? await owners.signIn(email, password) : null;
    if (!owner) {
      throttle.failed(email, ip);
      return again(401, 'The e-mail or the password is wrong.');
    }
    throttle.succeeded(email);
    await sessions.start(context.cookies, owner.id);
    return { kind: 'again', checked: request, params };
  }

  async decide(params: AuthorizeParameters, decision: 'allow' | 'deny', context: PageContext): Promise<AuthorizeOutcome> {
    const checked = await this.check(params);
    if ('refusal' in checked) return checked.refusal;
    const request = checked.request;
    const session = await this.deps.sessions.current(context.cookies);
    if (!session) return { kind: 'again', checked: request, params };
    if (!context.forms.accepts(CONSENT, consentBinding(session, request))) return { kind: 'refused', checked: request };
    if (decision !== 'allow') {
      return { kind: 'decided', checked: request, location: redirectWith(request.redirectUri, { error: 'access_denied', error_description: 'The owner denied the request', state: request.state }) };
    }
    const owner = await this.deps.owners.get(session.ownerId);
    const code = await this.deps.tokens.issueCode({
      appId: request.app.id,
      ownerId: session.ownerId,
      businessId: owner.business_id,
      livemode: request.livemode,
      scopes: request.scopes,
      redirectUri: request.namedRedirectUri,
      codeChallenge: request.codeChallenge,
    });
    return { kind: 'decided', checked: request, location: redirectWith(request.redirectUri, { code, state: request.state }) };
  }

  /** Ends the session whatever the authorize request, then shows that request again: its sign-in page. */
  async signOut(params: AuthorizeParameters, context: PageContext): Promise<AuthorizeOutcome> {
    const session = await this.deps.sessions.current(context.cookies);
    if (session) {
      if (!context.forms.accepts(SIGN_OUT, session.token)) return { kind: 'refused' };
      await this.deps.sessions.end(context.cookies, session);
    }
    return { kind: 'again', params };
  }

  /** The request when it may go on, or the outcome that refuses it. */
  private async check(params: AuthorizeParameters): Promise<{ request: AuthorizationRequest } | { refusal: AuthorizeOutcome }> {
    const checked = await checkAuthorization(this.deps.db, params);
    if (checked.kind === 'ok') return { request: checked.request };
    if (checked.kind === 'page') return { refusal: { kind: 'cannot_go_on', message: checked.message } };
    return { refusal: { kind: 'request_refused', location: redirectWith(checked.redirectUri, { error: checked.error, error_description: checked.description, state: checked.state }) } };
  }

  private async consent(request: AuthorizationRequest, session: OwnerSession, params: AuthorizeParameters, forms: PageForms): Promise<AuthorizeOutcome> {
    const owner = await this.deps.owners.get(session.ownerId);
    const business = await this.deps.businesses.get(owner.business_id);
    return {
      kind: 'consent',
      checked: request,
      params,
      businessName: business.name,
      ownerEmail: owner.email,
      formToken: forms.issue(CONSENT, consentBinding(session, request)),
      signOutToken: forms.issue(SIGN_OUT, session.token),
    };
  }
}

/** The sign-in form's token is bound to the browser's pre-sign-in cookie and the app: another site has neither the cookie nor a token for it. */
function signInBindingFor(browser: string, request: AuthorizationRequest): string {
  return `${browser}:${request.app.clientId}`;
}

function signInToken(forms: PageForms, browser: string, request: AuthorizationRequest): string {
  return forms.issue(SIGN_IN, signInBindingFor(browser, request));
}

/** The consent form's token is bound to the session and the app. */
function consentBinding(session: OwnerSession, request: AuthorizationRequest): string {
  return `${session.token}:${request.app.clientId}`;
}
