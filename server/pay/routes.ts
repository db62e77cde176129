/** `GET /pay/{token}`: the page behind every payment link. Public: the unguessable token is the capability. */
import { RequestHandler, Router } from 'express';
import { InvoiceService } from '../invoices/service';
import { notFoundPage, paymentPage } from './page';

/** The token is in the URL: keep the page out of caches, search engines, other sites' frames and Referer headers. */
const privatePage: RequestHandler = (_req, res, next) => {
  res.set({
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
    'X-Robots-Tag': 'noindex',
    'X-Frame-Options': 'DENY',
    'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  });
  next();
};

export function paymentPageRoutes(invoices: InvoiceService): Router {
  const r = Router();
  r.get('/pay/:token', privatePage, async (req, res) => {
    // Link checkers and mail scanners send HEAD: only a real GET counts as the client's view.
    const opened = await invoices.openPaymentPage(String(req.params.token), { markViewed: req.method === 'GET' });
    if (!opened) return void res.status(404).type('html').send(notFoundPage());
    res.type('html').send(paymentPage(opened.invoice, opened.businessName));
  });
  return r;
}
