/**
 * `GET /contracts/{token}/sign` (never framed) and `/contracts/{token}/embed` (framable by the
 * business's embed origins), and the same paths' form posts: Sign or Decline. Public: the
 * unguessable token is the capability.
 */
import { pageRoute, PageRoute } from '../pages/route';
import { signingFormFields } from './schema';
import { SigningPages } from './service';
import { SIGNING_VIEWS, signingOutcomeAnswer, signingPageAnswer } from './view';

export function signingPageRoutes(pages: SigningPages): PageRoute[] {
  return SIGNING_VIEWS.flatMap((view) => [
    pageRoute({
      method: 'get', path: `/contracts/:token/${view}`,
      handle: (input) => pages.open(input.params.token, input.forms).then((state) => signingPageAnswer(view, state)),
    }),
    pageRoute({
      method: 'post', path: `/contracts/:token/${view}`, form: signingFormFields,
      handle: (input) => pages.act(input.params.token, input.form, input).then((outcome) => signingOutcomeAnswer(input.params.token, view, outcome)),
    }),
  ]);
}
