/**
 * What the payment page does, one action per thing a client can do on it: open the page, download
 * its PDF, press Pay. Each orchestrates the invoice, gateway and payment services and returns what
 * happened; view.ts turns that into the answer.
 */
import { SystemActor } from '../auth/actor';
import { BusinessClocks } from '../db/clocks';
import { GatewayError, InvalidState, NotFound } from '../errors';
import { GatewayAmountRefused, GatewayUnavailable } from '../gateways/gateway';
import { GatewayService } from '../gateways/service';
import { InvoiceDocuments } from '../invoices/documents';
import { PaymentPath } from '../invoices/payment-path';
import { PAYABLE_STATUSES } from '../invoices/model';
import { InvoiceService } from '../invoices/service';
import { toMinor } from '../money/amount';
import { InvoiceDetail } from '../invoices/schema';
import { PageContext } from '../pages/route';
import { PageDownload, pageDownload } from '../pdf/pool';

const PAY = 'pay';

/** The invoice a payment link names, and the actor the page acts as for its business. */
type PayableLink = { actor: SystemActor; invoiceId: number };

/**
 * What the page offers for paying: a button (a simulated payment in test mode, the gateway's
 * checkout in live mode), or a notice: no gateway, or one that cannot charge this amount exactly.
 */
export type PayAction = { kind: 'test' | 'gateway'; formToken: string } | { kind: 'not_set_up' | 'amount_not_accepted' };

/** The page as it stands. */
export interface PaymentPageState {
  invoice: InvoiceDetail;
  businessName: string;
  action: PayAction;
  /** The client is back from the gateway's checkout (or a delayed payment is pending) and the gateway has not confirmed yet. */
  confirming: boolean;
}

export type PdfDownload = { kind: 'not_found' } | PageDownload;

/**
 * What pressing Pay did: nothing for an unknown link or a form that did not come from the page;
 * `back` to the page (a test payment recorded, already paid, the gateway removed meanwhile); a
 * gateway's `checkout` to go to; or the gateway's refusal.
 */
export type PayOutcome =
  | { kind: 'not_found' | 'refused' | 'back' | 'amount_not_accepted' | 'gateway_unavailable' }
  | { kind: 'checkout'; url: string };

export class PaymentPages {
  constructor(
    private readonly deps: {
      invoices: InvoiceService;
      documents: InvoiceDocuments;
      paymentPath: PaymentPath;
      gateways: GatewayService;
      clocks: BusinessClocks;
    },
  ) {}

  /**
   * The page of `token`, null when the token names no invoice. `returningFrom`: the checkout the
   * client came back from; `visit`: a client's view (a GET), not a link checker's HEAD.
   */
  async open(token: string, request: { returningFrom: string | null; visit: boolean }, context: PageContext): Promise<PaymentPageState | null> {
    const { invoices, clocks } = this.deps;
    const checkout = request.returningFrom;
    const link = await invoices.payableThroughLink(token);
    if (!link) return null;
    // What the page records (the client's view, in test mode a payment) is dated by the business's clock.
    return clocks.actFor(link.actor, () => this.openFor(link, token, checkout, request.visit, context));
  }

  private async openFor(
    link: PayableLink,
    token: string,
    checkout: string | null,
    visit: boolean,
    context: PageContext,
  ): Promise<PaymentPageState | null> {
    const { invoices, gateways } = this.deps;
    const live = link.actor.livemode ? link : null;
    // Back from the gateway, or a delayed payment still pending (its notification may be lost): ask
    // the gateway, server to server, before showing anything (at most once per interval per
    // checkout). The return alone proves nothing.
    const reading = live ? (checkout ?? (await gateways.pendingCheckout(live.actor, live.invoiceId))) : null;
    if (live && reading) {
      await gateways.confirmReturn(live.actor, live.invoiceId, reading).catch((err: unknown) => {
        context.log.warn({ err, businessId: live.actor.businessId }, 'the gateway could not confirm a returning checkout; the page keeps waiting');
      });
    }
    // Link checkers and mail scanners send HEAD: only a real GET counts as the client's view.
    const opened = await invoices.openPaymentPage(token, { markViewed: visit });
    if (!opened) return null;
    const { invoice } = opened;
    const formToken = context.forms.issue(PAY, token);
    const offer = invoice.livemode ? await gateways.checkoutOffer(opened.businessId, toMinor(invoice.amount_due, invoice.currency), invoice.currency) : null;
    const action: PayAction = !offer ? { kind: 'test', formToken } : offer === 'ready' ? { kind: 'gateway', formToken } : { kind: offer };
    // A pending delayed payment shows the return page's words and no Pay, so the client does not pay twice.
    const awaiting = checkout !== null || (live !== null && (await gateways.pendingCheckout(live.actor, live.invoiceId)) !== null);
    const confirming = awaiting && invoice.livemode && PAYABLE_STATUSES.includes(invoice.status);
    return { invoice, businessName: opened.businessName, action, confirming };
  }

  /** The page's `Download PDF`: the invoice, or the receipt once paid. */
  async pdf(token: string): Promise<PdfDownload> {
    const link = await this.deps.invoices.payableThroughLink(token);
    if (!link) return { kind: 'not_found' };
    return pageDownload(this.deps.documents.pdf(link.actor, link.invoiceId));
  }

  /** The Pay button: a simulated payment in test mode, the gateway's checkout in live mode. */
  async pay(token: string, context: PageContext): Promise<PayOutcome> {
    const { invoices, clocks } = this.deps;
    const link = await invoices.payableThroughLink(token);
    if (!link) return { kind: 'not_found' };
    if (!context.forms.accepts(PAY, token)) return { kind: 'refused' };
    return clocks.actFor(link.actor, () => this.payFor(link, token, context));
  }

  private async payFor(link: PayableLink, token: string, context: PageContext): Promise<PayOutcome> {
    const { paymentPath, gateways } = this.deps;
    if (!link.actor.livemode) {
      // The same path as simulate-payment: one payment of the amount due, the same events.
      await paymentPath.simulate(link.actor, link.invoiceId).catch((err: unknown) => {
        if (!(err instanceof InvalidState)) throw err; // paid meanwhile (a double click): the page shows it
      });
      return { kind: 'back' };
    }
    try {
      const checkout = await gateways.startCheckout(link.actor, link.invoiceId, token);
      if (checkout) return { kind: 'checkout', url: checkout.url };
    } catch (err) {
      if (err instanceof GatewayAmountRefused) {
        context.log.warn({ err, businessId: link.actor.businessId, invoiceId: link.invoiceId }, 'the payment gateway will not charge this amount');
        return { kind: 'amount_not_accepted' };
      }
      // GatewayError: the stored credentials do not open (the business must set them again).
      if (err instanceof GatewayUnavailable || err instanceof GatewayError) {
        context.log.error({ err, businessId: link.actor.businessId, invoiceId: link.invoiceId }, 'the payment gateway refused or could not open a checkout');
        return { kind: 'gateway_unavailable' };
      }
      if (!(err instanceof NotFound)) throw err; // the gateway was removed meanwhile: the page says so
    }
    return { kind: 'back' };
  }
}
