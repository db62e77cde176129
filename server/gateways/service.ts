/**
 * Online payment through a business's own gateway: its sealed credentials, the checkout opened
 * from the payment page, and the gateway's confirmation (its signed notification, or a server-side
 * read of the checkout when the client returns). A payment is recorded only on the gateway's word,
 * never on the browser's return alone, and always through PaymentPath (one payment path).
 * Gateway calls happen outside database transactions.
 */
import { Knex } from 'knex';
import { Logger } from 'pino';
import { acrossTenants, Actor, SystemActor, systemActor } from '../auth/actor';
import { Clock } from '../clock';
import { BusinessClocks } from '../db/clocks';
import { Database } from '../db/database';
import { toDbTime } from '../db/time';
import { InvoiceLinks } from '../invoices/links';
import { amountDue, Invoice, PAYABLE_STATUSES } from '../invoices/model';
import { PaymentPath } from '../invoices/payment-path';
import { GatewayClients } from './clients';
import { CheckoutState, GatewayRefund, GatewayUnavailable, RefundedPayment } from './gateway';
import { CheckoutSession, GatewayCredentials } from './model';
import { NewGatewayCredentials } from './schema';
import { GatewayView, toGatewayView } from './view';

/**
 * An open checkout is reused only with at least this long left before the gateway expires it: the
 * client still has to type card details and pass the bank's check on the gateway's page.
 */
const REUSE_MARGIN_MS = 60 * 60 * 1000;

/**
 * A returning client's page reloads itself every few seconds while a delayed payment is pending,
 * and anyone with the link can load it or post its Pay: a session is read from the gateway at
 * most once per this interval (the gateway's own notification settles it in between).
 */
const READ_INTERVAL_MS = 10 * 1000;

/**
 * What a gateway's word does to refunds, implemented by RefundService (server/refunds/): refunds sit
 * above the gateways they call, so this service names what it uses rather than importing it.
 */
export interface GatewayRefunds {
  /** In the payment's transaction: reserves the refund of what the gateway took beyond what was due, or null when there is none. */
  reserveExcess(trx: Knex.Transaction, actor: Actor, paymentId: number, excess: number): Promise<unknown>;
  /** After that commit: sends the reserved refund, as `reserveExcess` returned it, to the gateway. */
  sendReserved(actor: Actor, reserved: unknown): Promise<unknown>;
  /** A refund the gateway reports (one made in its dashboard too): false when the payment is not this business mode's. */
  recordGatewayRefund(actor: Actor, gateway: string, paymentReference: string, amountRefunded: number, refundReference: string | null): Promise<boolean>;
  /** One refund's new state at the gateway: false when the payment is not this business mode's. */
  recordRefundUpdate(actor: Actor, gateway: string, paymentReference: string, reported: GatewayRefund): Promise<boolean>;
}

export class GatewayService {
  constructor(
    private readonly db: Database,
    private readonly paymentPath: PaymentPath,
    private readonly refunds: GatewayRefunds,
    private readonly clients: GatewayClients,
    private readonly logger: Logger,
    private readonly links: InvoiceLinks,
    /** Each business's clock: what a notification records is dated by its business and mode's, as a request's would be. */
    private readonly clocks: BusinessClocks,
    private readonly clock: Clock,
  ) {}

  /** Sets (or replaces) a business's gateway credentials, sealed at rest; `input` is valid by gatewayCredentialsSchema. */
  async set(businessId: number, input: NewGatewayCredentials): Promise<GatewayView> {
    const fields = { provider: input.provider, secret_key_last4: input.secretKey.slice(-4), webhook_secret_last4: input.webhookSecret.slice(-4) };
    return this.db.transaction(async (trx) => {
      const existing = await GatewayCredentials.query(trx).findOne({ business_id: businessId }).forUpdate();
      // The secrets are bound to the row's id: a new row is inserted with placeholders that open as
      // nothing, and sealed in this transaction once it has its id.
      const id = existing?.id ?? (await GatewayCredentials.query(trx).insert({ business_id: businessId, ...fields, secret_key_sealed: '', webhook_secret_sealed: '' })).id;
      const saved = await GatewayCredentials.query(trx).patchAndFetchById(id, { ...fields, ...this.clients.seal({ id, business_id: businessId }, input) });
      return toGatewayView(saved);
    });
  }

  async show(businessId: number): Promise<GatewayView | null> {
    const row = await GatewayCredentials.query(this.db.current).findOne({ business_id: businessId });
    return row ? toGatewayView(row) : null;
  }

  /** Removes the credentials: live invoices of the business can no longer be paid online. */
  async remove(businessId: number): Promise<boolean> {
    return (await GatewayCredentials.query(this.db.current).delete().where({ business_id: businessId })) > 0;
  }

  async isSetUp(businessId: number): Promise<boolean> {
    return (await GatewayCredentials.query(this.db.current).findOne({ business_id: businessId })) !== undefined;
  }

  /**
   * What the payment page offers for paying `amount` (minor units) online: the gateway's checkout,
   * nothing (no gateway), or nothing for this amount (the gateway cannot charge it exactly, and it
   * is never rounded).
   */
  async checkoutOffer(businessId: number, amount: number, currency: string): Promise<'ready' | 'not_set_up' | 'amount_not_accepted'> {
    const accepts = await this.clients.accepts(businessId, amount, currency);
    return accepts === null ? 'not_set_up' : accepts ? 'ready' : 'amount_not_accepted';
  }

  /**
   * The checkout for an invoice's amount due, opened at the gateway, or the one already open for
   * that amount while the gateway still takes payment on it for a while. A newer checkout expires
   * the older ones: an invoice has at most one open. Returns null when nothing is due, when the
   * gateway cannot charge the amount exactly (the page says so), or when the open checkout was
   * paid meanwhile (recorded here if the money is taken).
   */
  async startCheckout(actor: SystemActor, invoiceId: number, pageToken: string): Promise<{ url: string } | null> {
    const invoice = await Invoice.of(actor, this.db.current).findById(invoiceId);
    if (!invoice || !PAYABLE_STATUSES.includes(invoice.status) || amountDue(invoice) <= 0) return null;
    const amount = amountDue(invoice);
    const gateway = await this.clients.of(actor.businessId);
    if (!gateway.accepts(amount, invoice.currency)) return null;
    // The client already paid with a delayed method: another checkout would let them pay twice.
    if (await this.pendingCheckout(actor, invoiceId)) return null;
    const open = await CheckoutSession.of(actor, this.db.current).where({ invoice_id: invoiceId, status: 'open' });
    const cutoff = this.clock.now().getTime() + REUSE_MARGIN_MS;
    const candidate = open.find((session) => session.amount === amount && session.currency === invoice.currency && Date.parse(session.expires_at) > cutoff);
    if (candidate) {
      // Read within the interval and still open here: reused without asking again.
      if (!(await this.claimRead(actor, candidate))) return { url: candidate.url };
      // Stripe may have expired it early (its event lost or still on its way), or the client paid it in another tab.
      const state = await gateway.readCheckout(candidate.session_id);
      if (state.outcome === 'open') return { url: candidate.url };
      if (state.outcome !== 'expired') {
        await this.confirm(actor, candidate, state);
        return null;
      }
    }

    const pageUrl = this.links.paymentUrl(pageToken);
    const opened = await gateway.openCheckout({
      invoiceId,
      amount,
      currency: invoice.currency,
      description: `Invoice ${invoice.number ?? invoiceId}`,
      successUrl: `${pageUrl}?checkout_session={CHECKOUT_SESSION_ID}`,
      cancelUrl: pageUrl,
    });
    if (!opened.livemode) {
      // Credentials set before test keys were refused: a test checkout would let a test card pay a live invoice.
      await gateway.expireCheckout(opened.sessionId);
      throw new GatewayUnavailable('the business\'s gateway credentials are test-mode keys; set live ones with `business gateway set`');
    }
    const superseded = await this.db.transaction(async (trx) => {
      const older = await CheckoutSession.of(actor, trx).where({ invoice_id: invoiceId, status: 'open' }).forUpdate();
      if (older.length) await CheckoutSession.of(actor, trx).whereIn('id', older.map((session) => session.id)).patch({ status: 'expired' });
      await CheckoutSession.of(actor, trx).insert({
        ...CheckoutSession.ownedBy(actor),
        invoice_id: invoiceId,
        provider: 'stripe',
        session_id: opened.sessionId,
        status: 'open',
        amount,
        currency: invoice.currency,
        url: opened.url,
        expires_at: opened.expiresAt.toISOString(),
      });
      return older;
    });
    for (const session of superseded) {
      await gateway.expireCheckout(session.session_id).catch((err: unknown) => this.logger.warn({ err, businessId: actor.businessId }, 'an older checkout could not be expired'));
    }
    return { url: opened.url };
  }

  /**
   * The client is back from the checkout: ask the gateway (server to server) how it stands, and
   * record the payment if it is taken. The return URL alone proves nothing. Only an open or pending
   * session is read, and at most once per READ_INTERVAL_MS.
   */
  async confirmReturn(actor: SystemActor, invoiceId: number, sessionId: string): Promise<void> {
    const session = await CheckoutSession.of(actor, this.db.current).findOne({ invoice_id: invoiceId, session_id: sessionId });
    if (!session || (session.status !== 'open' && session.status !== 'pending')) return;
    if (!(await this.claimRead(actor, session))) return;
    await this.confirm(actor, session, await (await this.clients.of(actor.businessId)).readCheckout(sessionId));
  }

  /**
   * Whether this request may read the session from the gateway now: nobody did within
   * READ_INTERVAL_MS, and its status is still the one seen. One conditional update of the row's
   * last_read_at claims the read, so the limit holds whatever the number of server processes.
   */
  private async claimRead(actor: Actor, session: CheckoutSession): Promise<boolean> {
    const now = this.clock.now();
    const claimed = await CheckoutSession.of(actor, this.db.current)
      .where({ id: session.id, status: session.status })
      .where((unread) => {
        void unread.whereNull('last_read_at').orWhere('last_read_at', '<=', toDbTime(new Date(now.getTime() - READ_INTERVAL_MS)));
      })
      .patch({ last_read_at: now.toISOString() });
    return claimed > 0;
  }

  /** The invoice's checkout whose delayed payment the gateway has yet to confirm, if any (its session id). */
  async pendingCheckout(actor: SystemActor, invoiceId: number): Promise<string | null> {
    return (await CheckoutSession.of(actor, this.db.current).findOne({ invoice_id: invoiceId, status: 'pending' }))?.session_id ?? null;
  }

  /**
   * An invoice was voided, or a payment received elsewhere changed its amount due (after the
   * commit): its open checkouts for another amount than is now due are expired at the gateway,
   * then here, so that nobody pays a cancelled invoice or pays twice. One the gateway could not
   * expire stays open here and is logged: if it is paid after all, the payment is recorded and
   * its excess refunded.
   */
  async expireStaleCheckouts(actor: Actor, invoiceId: number): Promise<void> {
    const invoice = await Invoice.of(actor, this.db.current).findById(invoiceId);
    const due = invoice && PAYABLE_STATUSES.includes(invoice.status) ? amountDue(invoice) : 0;
    const open = (await CheckoutSession.of(actor, this.db.current).where({ invoice_id: invoiceId, status: 'open' })).filter((session) => due <= 0 || session.amount !== due);
    if (!open.length) return;
    const context = { businessId: actor.businessId, invoiceId };
    try {
      const gateway = await this.clients.of(actor.businessId);
      for (const session of open) {
        await gateway.expireCheckout(session.session_id);
        await CheckoutSession.of(actor, this.db.current).where({ id: session.id, status: 'open' }).patch({ status: 'expired' });
      }
    } catch (err) {
      this.logger.error({ ...context, err }, 'a checkout for an amount no longer due could not be expired at the gateway; it may still be paid (and its excess then refunded)');
    }
  }

  /** The gateway's word on a checkout: a test-mode one never settles a live invoice; a paid one is recorded, a pending one marked. */
  private async confirm(actor: Actor, session: CheckoutSession, state: CheckoutState): Promise<void> {
    if (!state.livemode) {
      this.logger.warn({ businessId: actor.businessId, sessionId: session.session_id }, 'the gateway reports a test-mode checkout (livemode false) for a live invoice; nothing recorded');
      return;
    }
    if (state.outcome === 'paid') await this.settle(actor, session, state);
    else if (state.outcome === 'pending') await this.markPending(actor, session);
  }

  /** Paid with a delayed method, not yet confirmed: the page offers no Pay meanwhile. */
  private async markPending(actor: Actor, session: CheckoutSession): Promise<void> {
    await CheckoutSession.of(actor, this.db.current).where({ id: session.id, status: 'open' }).patch({ status: 'pending' });
  }

  /**
   * A signed notification from the business's gateway. Throws NotFound when the business has no
   * gateway, GatewaySignatureInvalid when the signature does not verify; ignores other events.
   */
  async handleNotification(businessId: number, rawBody: Buffer, signature: string | undefined): Promise<void> {
    const notification = (await this.clients.of(businessId)).readNotification(rawBody, signature);
    if (notification && !notification.livemode) {
      // Test money never settles anything: acknowledged, so Stripe stops retrying.
      this.logger.warn({ businessId, kind: notification.kind }, 'a test-mode gateway event (livemode false) settles nothing; acknowledged and ignored');
      return;
    }
    if (notification?.kind === 'refunded') await this.recordRefund(businessId, notification.refunded);
    if (notification?.kind === 'refund_updated') await this.recordRefundUpdate(businessId, notification.paymentReference, notification.refund);
    if (notification?.kind !== 'checkout') return;
    const state = notification.checkout;
    const session = await CheckoutSession.acrossTenants(acrossTenants('gateway notification'), this.db.current)
      .where({ business_id: businessId, session_id: state.sessionId })
      .first();
    if (!session) {
      this.logger.warn({ businessId, sessionId: state.sessionId }, 'gateway notification for a checkout this business did not open; ignored');
      return;
    }
    const actor = systemActor('payment gateway', { businessId, livemode: session.livemode });
    await this.clocks.actFor(actor, async () => {
      if (state.outcome === 'paid') await this.settle(actor, session, state);
      else if (state.outcome === 'pending') await this.markPending(actor, session);
      else if (state.outcome === 'failed') await this.fail(actor, session, state);
      else if (state.outcome === 'expired') await CheckoutSession.of(actor, this.db.current).where({ id: session.id, status: 'open' }).patch({ status: 'expired' });
    });
  }

  private async settle(actor: Actor, session: CheckoutSession, state: CheckoutState): Promise<void> {
    if (!state.paymentReference || state.amount === null || state.currency !== session.currency) {
      this.logger.error({ businessId: actor.businessId, sessionId: session.session_id }, 'gateway reported a paid checkout without a payment reference, amount or matching currency; not recorded');
      return;
    }
    // The excess refund is reserved with the payment, in its transaction: if this process dies
    // before sending it, the reconciliation sweep finds it pending and sends it, once.
    let excessRefund: unknown = null;
    const recorded = await this.paymentPath.recordFromGateway(
      actor,
      session.invoice_id,
      state.amount,
      { method: 'card', gateway: session.provider, gatewayReference: state.paymentReference },
      async (trx, payment) => {
        if (payment.excess > 0) excessRefund = await this.refunds.reserveExcess(trx, actor, payment.payment.id, payment.excess);
      },
    );
    await CheckoutSession.of(actor, this.db.current).findById(session.id).patch({ status: 'complete' });
    if (excessRefund) {
      const context = { businessId: actor.businessId, invoiceId: session.invoice_id, paymentId: recorded.payment.id, excessMinor: recorded.excess };
      this.logger.warn(context, 'the gateway took more than was due (an overpayment, or a paid or void invoice); refunding the excess');
      await this.refunds.sendReserved(actor, excessRefund).catch((err: unknown) => this.logger.error({ ...context, err }, 'the excess was not refunded yet; it stays pending and the reconciliation sweep settles it'));
    }
  }

  /** A refund reported by the gateway (one made in its dashboard too): recorded once, whichever business mode the payment is in. */
  private async recordRefund(businessId: number, refunded: RefundedPayment): Promise<void> {
    for (const livemode of [true, false]) {
      const actor = systemActor('payment gateway', { businessId, livemode });
      const recorded = await this.clocks.actFor(actor, () => this.refunds.recordGatewayRefund(actor, 'stripe', refunded.paymentReference, refunded.amountRefunded, refunded.refundReference));
      if (recorded) return;
    }
  }

  /** One refund's new state (it succeeded, or failed at the bank), for whichever business mode the payment is in. */
  private async recordRefundUpdate(businessId: number, paymentReference: string, refund: GatewayRefund): Promise<void> {
    for (const livemode of [true, false]) {
      const actor = systemActor('payment gateway', { businessId, livemode });
      if (await this.clocks.actFor(actor, () => this.refunds.recordRefundUpdate(actor, 'stripe', paymentReference, refund))) return;
    }
  }

  /** A delayed payment method failed: `payment.failed` with the invoice and the reason. */
  private async fail(actor: Actor, session: CheckoutSession, state: CheckoutState): Promise<void> {
    await this.db.transaction(async (trx) => {
      // Stripe sends an event again until it is acknowledged (and sometimes twice): a checkout fails once.
      const locked = await CheckoutSession.of(actor, trx).findById(session.id).forUpdate();
      if (!locked || locked.status === 'failed' || locked.status === 'complete') return;
      const invoice = await Invoice.of(actor, trx).findById(session.invoice_id);
      if (!invoice) return;
      await CheckoutSession.of(actor, trx).findById(session.id).patch({ status: 'failed' });
      await this.paymentPath.recordFailure(trx, actor, invoice, state.failureReason ?? 'The payment failed');
    });
  }

}
