/**
 * `GET /contracts/{token}/sign` (never framed) and `/contracts/{token}/embed` (framable by the
 * business's embed origins), the same paths' form posts (Sign, `Confirm decline`), their decline
 * pages (`…/decline`), and `GET /contracts/{token}/pdf`: the signed copy. Public: the unguessable
 * token is the capability.
 */
import { addressRateLimit, RateLimitOptions } from '../http/rate-limit';
import { UNFRAMED } from '../pages/hygiene';
import { tryAgainLaterPage } from '../pages/layout';
import { pageRoute, PageRoute } from '../pages/route';
import { signingFormFields } from './schema';
import { SigningPages } from './service';
import { declinePageAnswer, SIGNING_VIEWS, signedCopyAnswer, signingOutcomeAnswer, signingPageAnswer } from './view';

export function signingPageRoutes(
  pages: SigningPages,
  /** Signed copies are limited per client address, as the payment page's PDFs are (counted apart from them). */
  pdfDownloads: Pick<RateLimitOptions, 'perMinute' | 'redis' | 'redisPrefix' | 'logger'>,
): PageRoute[] {
  return [
    ...SIGNING_VIEWS.flatMap((view) => [
      pageRoute({
        method: 'get', path: `/contracts/:token/${view}`,
        handle: ({ params, forms }) => pages.open(params.token, forms).then((state) => signingPageAnswer(params.token, view, state)),
      }),
      pageRoute({
        method: 'get', path: `/contracts/:token/${view}/decline`,
        handle: ({ params, forms }) => pages.open(params.token, forms).then((state) => declinePageAnswer(params.token, view, state)),
      }),
      pageRoute({
        method: 'post', path: `/contracts/:token/${view}`, form: signingFormFields,
        handle: (input) => pages.act(input.params.token, input.form, input).then((outcome) => signingOutcomeAnswer(input.params.token, view, outcome)),
      }),
    ]),
    // The signed page's `Download signed PDF` link (a download, so it is never shown in a frame).
    pageRoute({
      method: 'get', path: '/contracts/:token/pdf', headers: UNFRAMED,
      limit: addressRateLimit(pdfDownloads, 'contract-pdf-downloads', (res) => res.status(429).type('html').send(tryAgainLaterPage())),
      handle: ({ params }) => pages.signedCopy(params.token).then(signedCopyAnswer),
    }),
  ];
}
