/**
 * `GET /oauth/authorize` and its forms: the owner signs in, then allows or denies the app for their
 * business in the mode asked; or signs out. Unknown clients and unregistered redirect URIs get a
 * page; every other outcome goes back to the app's redirect URI (RFC 6749 §4.1.2).
 */
import { pageRoute, PageRoute } from '../pages/route';
import { authorizeQuery, decisionForm, signInForm, signOutForm } from './schema';
import { AuthorizePages } from './service';
import { authorizeAnswer } from './view';

export function authorizeRoutes(pages: AuthorizePages): PageRoute[] {
  return [
    pageRoute({
      method: 'get', path: '/oauth/authorize', query: authorizeQuery,
      handle: (input) => pages.show(input.query.params, input).then(authorizeAnswer),
    }),
    pageRoute({
      method: 'post', path: '/oauth/authorize/sign-in', form: signInForm,
      handle: (input) => pages.signIn(input.form.params, input.form, input).then(authorizeAnswer),
    }),
    pageRoute({
      method: 'post', path: '/oauth/authorize/decision', form: decisionForm,
      handle: (input) => pages.decide(input.form.params, input.form.decision, input).then(authorizeAnswer),
    }),
    pageRoute({
      method: 'post', path: '/oauth/authorize/sign-out', form: signOutForm,
      handle: (input) => pages.signOut(input.form.params, input).then(authorizeAnswer),
    }),
  ];
}
