/**
 * `GET /pay/{token}`: the page behind every payment link, `POST /pay/{token}`: its Pay button, and
 * `GET /pay/{token}/pdf`: its PDF.
 * Public: the unguessable token is the capability.
 */
import { addressRateLimit, RateLimitOptions } from '../http/rate-limit';
import { UNFRAMED } from '../pages/hygiene';
import { tryAgainLaterPage } from '../pages/layout';
import { pageRoute, PageRoute } from '../pages/route';
import { paymentPageQuery } from './schema';
import { PaymentPages } from './service';
import { paymentPageAnswer, payAnswer, pdfAnswer } from './view';

export function paymentPageRoutes(
  pages: PaymentPages,
  /** PDF downloads are limited per client address: a link needs no key, and a long invoice takes a PDF thread half a second. */
  pdfDownloads: Pick<RateLimitOptions, 'perMinute' | 'redis' | 'redisPrefix' | 'logger'>,
): PageRoute[] {
  return [
    pageRoute({
      method: 'get', path: '/pay/:token', headers: UNFRAMED, query: paymentPageQuery,
      handle: (input) =>
        pages
          .open(input.params.token, { returningFrom: input.query.checkout_session, visit: input.method === 'GET' }, input)
          .then((state) => paymentPageAnswer(input.params.token, state)),
    }),
    // The page's `Download PDF` link: the invoice, or the receipt once paid.
    pageRoute({
      method: 'get', path: '/pay/:token/pdf', headers: UNFRAMED,
      limit: addressRateLimit(pdfDownloads, 'pdf-downloads', (res) => res.status(429).type('html').send(tryAgainLaterPage())),
      handle: ({ params }) => pages.pdf(params.token).then(pdfAnswer),
    }),
    pageRoute({
      method: 'post', path: '/pay/:token', headers: UNFRAMED,
      handle: (input) => pages.pay(input.params.token, input).then((outcome) => payAnswer(input.params.token, outcome)),
    }),
  ];
}
