/**
 * `GET /pay/{token}`: the page behind every payment link, `POST /pay/{token}`: its Pay button, and
 * `GET /pay/{token}/pdf`: its PDF.
 * Public: the unguessable token is the capability.
 */
import { Request, Router } from 'express';
import { GatewayError, InvalidState, NotFound, PdfBusy } from '../errors';
import { GatewayAmountRefused, GatewayUnavailable } from '../gateways/gateway';
import { GatewayService } from '../gateways/service';
import { addressRateLimit, RateLimitOptions } from '../http/rate-limit';
import { InvoiceDocuments } from '../invoices/documents';
import { InvoiceService } from '../invoices/service';
import { toMinor } from '../money/amount';
import { PAYABLE_STATUSES } from '../invoices/model';
import { FormGuard, hostedPageHeaders, parseForm } from '../pages/hygiene';
import { refusedFormPage } from '../pages/layout';
import { PaymentService } from '../payments/service';
import { amountNotAcceptedPage, checkoutRedirectPage, gatewayUnavailablePage, notFoundPage, PayAction, paymentPage, tryAgainLaterPage } from './page';

const PAY = 'pay';

/** The checkout the client came back from (`?checkout_session=`), if the query names one. */
function returningFrom(req: Request): string | null {
  const id = req.query.checkout_session;
  return typeof id === 'string' && /^[A-Za-z0-9_]{1,255}$/.test(id) ? id : null;
}

export function paymentPageRoutes(deps: {
  invoices: InvoiceService;
  documents: InvoiceDocuments;
  payments: PaymentService;
  gateways: GatewayService;
  forms: FormGuard;
  /** PDF downloads are limited per client address: a link needs no key, and a long invoice takes a PDF thread half a second. */
  pdfDownloads: Pick<RateLimitOptions, 'perMinute' | 'redis' | 'redisPrefix' | 'logger'>;
}): Router {
  const { invoices, documents, payments, gateways, forms } = deps;
  const pdfDownloadLimit = addressRateLimit(deps.pdfDownloads, 'pdf-downloads', (res) => res.status(429).type('html').send(tryAgainLaterPage()));
  const r = Router();

  r.get('/pay/:token', hostedPageHeaders, async (req, res) => {
    const token = String(req.params.token);
    const checkout = returningFrom(req);
    const link = await invoices.payableThroughLink(token);
    const live = link?.actor.livemode ? link : null;
    // Back from the gateway, or a delayed payment still pending (its notification may be lost): ask
    // the gateway, server to server, before showing anything (at most once per interval per
    // checkout). The return alone proves nothing.
    const reading = live ? (checkout ?? (await gateways.pendingCheckout(live.actor, live.invoiceId))) : null;
    if (live && reading) {
      await gateways.confirmReturn(live.actor, live.invoiceId, reading).catch((err: unknown) => {
        req.log?.warn({ err, businessId: live.actor.businessId }, 'the gateway could not confirm a returning checkout; the page keeps waiting');
      });
    }
    // Link checkers and mail scanners send HEAD: only a real GET counts as the client's view.
    const opened = await invoices.openPaymentPage(token, { markViewed: req.method === 'GET' });
    if (!opened) return void res.status(404).type('html').send(notFoundPage());
    const { invoice } = opened;
    const formToken = forms.token(PAY, token);
    const offer = invoice.livemode ? await gateways.checkoutOffer(opened.businessId, toMinor(invoice.amount_due, invoice.currency), invoice.currency) : null;
    const action: PayAction = !offer ? { kind: 'test', formToken } : offer === 'ready' ? { kind: 'gateway', formToken } : { kind: offer };
    // A pending delayed payment shows the return page's words and no Pay, so the client does not pay twice.
    const awaiting = checkout !== null || (live !== null && (await gateways.pendingCheckout(live.actor, live.invoiceId)) !== null);
    const confirming = awaiting && invoice.livemode && PAYABLE_STATUSES.includes(invoice.status);
    const pdfUrl = `/pay/${encodeURIComponent(token)}/pdf`;
    res.type('html').send(paymentPage({ invoice, businessName: opened.businessName, action, confirming, pdfUrl }));
  });

  // The page's `Download PDF` link: the invoice, or the receipt once paid.
  r.get('/pay/:token/pdf', hostedPageHeaders, pdfDownloadLimit, async (req, res) => {
    const link = await invoices.payableThroughLink(String(req.params.token));
    if (!link) return void res.status(404).type('html').send(notFoundPage());
    try {
      const { filename, content } = await documents.pdf(link.actor, link.invoiceId);
      res.attachment(filename).type('application/pdf').send(content);
    } catch (err) {
      if (!(err instanceof PdfBusy)) throw err;
      res.status(503).set('Retry-After', String(err.retryAfterSeconds)).type('html').send(tryAgainLaterPage());
    }
  });

  r.post('/pay/:token', hostedPageHeaders, parseForm, async (req, res) => {
    const token = String(req.params.token);
    const link = await invoices.payableThroughLink(token);
    if (!link) return void res.status(404).type('html').send(notFoundPage());
    if (!forms.accepts(req, PAY, token)) return void res.status(403).type('html').send(refusedFormPage());
    if (!link.actor.livemode) {
      // The same path as simulate-payment: one payment of the amount due, the same events.
      await payments.simulate(link.actor, link.invoiceId).catch((err: unknown) => {
        if (!(err instanceof InvalidState)) throw err; // paid meanwhile (a double click): the page shows it
      });
      return void res.redirect(303, `/pay/${encodeURIComponent(token)}`);
    }
    try {
      const checkout = await gateways.startCheckout(link.actor, link.invoiceId, token);
      if (checkout) return void res.type('html').send(checkoutRedirectPage(checkout.url));
    } catch (err) {
      if (err instanceof GatewayAmountRefused) {
        req.log?.warn({ err, businessId: link.actor.businessId, invoiceId: link.invoiceId }, 'the payment gateway will not charge this amount');
        return void res.status(422).type('html').send(amountNotAcceptedPage());
      }
      // GatewayError: the stored credentials do not open (the business must set them again).
      if (err instanceof GatewayUnavailable || err instanceof GatewayError) {
        req.log?.error({ err, businessId: link.actor.businessId, invoiceId: link.invoiceId }, 'the payment gateway refused or could not open a checkout');
        return void res.status(502).type('html').send(gatewayUnavailablePage());
      }
      if (!(err instanceof NotFound)) throw err; // the gateway was removed meanwhile: the page says so
    }
    res.redirect(303, `/pay/${encodeURIComponent(token)}`);
  });
  return r;
}
