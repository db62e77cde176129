/**
 * `GET /pay/{token}`: the page behind every payment link, and `POST /pay/{token}`: its Pay button.
 * Public: the unguessable token is the capability.
 */
import { Router } from 'express';
import { InvalidState } from '../errors';
import { InvoiceService } from '../invoices/service';
import { FormGuard, hostedPageHeaders, parseForm } from '../pages/hygiene';
import { PaymentService } from '../payments/service';
import { refusedFormPage } from '../pages/layout';
import { notFoundPage, PayAction, paymentPage } from './page';

const PAY = 'pay';

export function paymentPageRoutes(invoices: InvoiceService, payments: PaymentService, forms: FormGuard): Router {
  const r = Router();

  r.get('/pay/:token', hostedPageHeaders, async (req, res) => {
    const token = String(req.params.token);
    // Link checkers and mail scanners send HEAD: only a real GET counts as the client's view.
    const opened = await invoices.openPaymentPage(token, { markViewed: req.method === 'GET' });
    if (!opened) return void res.status(404).type('html').send(notFoundPage());
    // Live payments need a gateway, which is not set up yet: the page says so instead of offering a button.
    const action: PayAction = opened.invoice.livemode ? { kind: 'not_set_up' } : { kind: 'test', formToken: forms.token(PAY, token) };
    res.type('html').send(paymentPage({ ...opened, action }));
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
    }
    res.redirect(303, `/pay/${encodeURIComponent(token)}`);
  });
  return r;
}
