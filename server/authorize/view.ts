/** The sign-in and consent pages of `/oauth/authorize`: plain HTML, no scripts, the contract's accessible names. */
import { Scope } from '../auth/scopes';
import { UNFRAMED } from '../pages/hygiene';
import { html, SafeHtml } from '../pages/html';
import { page, refusedFormPage } from '../pages/layout';
import { PageAnswer } from '../pages/route';
import type { AuthorizeParameters } from './schema';
import type { AuthorizeOutcome } from './service';

const SCOPE_TEXT: Record<Scope, string> = {
  'invoices:read': 'Read invoices',
  'invoices:write': 'Create, send and void invoices',
  'contracts:read': 'Read contracts',
  'contracts:write': 'Create and countersign contracts',
  'clients:read': 'Read clients',
  'clients:write': 'Create, change and delete clients',
  'payments:read': 'Read payments',
  'payments:write': 'Record payments',
  'expenses:read': 'Read expenses',
  'expenses:write': 'Create, change and delete expenses',
};

/** The authorize request's parameters, carried through the forms as they came. */
function carried(params: Record<string, string>, formToken: string): SafeHtml {
  return html`<input type="hidden" name="form_token" value="${formToken}">${Object.entries(params).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`,
  )}`;
}

export function signInPage(appName: string, params: Record<string, string>, formToken: string, problem?: string): string {
  return page(
    `Sign in to connect ${appName}`,
    html`<h1>Sign in</h1>
<h2>${appName} asks to connect to your business</h2>
${problem ? html`<p class="error" role="alert">${problem}</p>` : ''}
<form method="post" action="/oauth/authorize/sign-in">
${carried(params, formToken)}
<label for="email">Email</label>
<input type="text" id="email" name="email" autocomplete="username" inputmode="email" maxlength="254">
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" maxlength="1024">
<button type="submit">Sign in</button>
</form>`,
  );
}

export function consentPage(input: {
  appName: string;
  businessName: string;
  ownerEmail: string;
  livemode: boolean;
  scopes: Scope[];
  params: Record<string, string>;
  formToken: string;
  signOutToken: string;
}): string {
  return page(
    `Allow ${input.appName}?`,
    html`<h1>Allow ${input.appName}?</h1>
<h2>${input.appName} will act for ${input.businessName} in ${input.livemode ? 'live mode (real data)' : 'test mode'}</h2>
<p>It will be able to:</p>
<ul class="scopes">${input.scopes.map((scope) => html`<li><strong>${SCOPE_TEXT[scope]}</strong> <code>${scope}</code></li>`)}</ul>
<form method="post" action="/oauth/authorize/decision">
${carried(input.params, input.formToken)}
<button type="submit" name="decision" value="allow">Allow</button>
</form>
<form method="post" action="/oauth/authorize/decision">
${carried(input.params, input.formToken)}
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>
<p class="hint">You can end this access at any time: invoicing oauth grants revoke.</p>
<form method="post" action="/oauth/authorize/sign-out">
${carried(input.params, input.signOutToken)}
<p class="hint">Signed in as ${input.ownerEmail}</p>
<button type="submit" class="secondary">Sign out</button>
</form>`,
  );
}

export function authorizeErrorPage(message: string): string {
  return page('Cannot connect', html`<h1>This connection cannot go on</h1><p>${message}</p>`);
}

/** Back to the authorize page with the request's own parameters (a path of ours: never another site). */
function authorizeAgain(params: AuthorizeParameters): string {
  return `/oauth/authorize?${new URLSearchParams(params).toString()}`;
}

/** Once the request is checked, the page's forms may end up at the app's redirect URI (a redirect after the post). */
export function authorizeAnswer(outcome: AuthorizeOutcome): PageAnswer {
  const { checked } = outcome;
  const headers = checked ? { formAction: [new URL(checked.redirectUri).origin] } : UNFRAMED;
  switch (outcome.kind) {
    case 'cannot_go_on':
      return { status: 400, headers, html: authorizeErrorPage(outcome.message) };
    case 'request_refused':
      return { status: 302, headers, redirect: outcome.location };
    case 'sign_in':
      return { status: outcome.problem?.status ?? 200, headers, html: signInPage(outcome.checked.app.name, outcome.params, outcome.formToken, outcome.problem?.message) };
    case 'consent':
      return {
        headers,
        html: consentPage({
          appName: outcome.checked.app.name,
          businessName: outcome.businessName,
          ownerEmail: outcome.ownerEmail,
          livemode: outcome.checked.livemode,
          scopes: outcome.checked.scopes,
          params: outcome.params,
          formToken: outcome.formToken,
          signOutToken: outcome.signOutToken,
        }),
      };
    case 'refused':
      return { status: 403, headers, html: refusedFormPage() };
    case 'again':
      return { status: 303, headers, redirect: authorizeAgain(outcome.params) };
    case 'decided':
      return { status: 303, headers, redirect: outcome.location };
  }
}
