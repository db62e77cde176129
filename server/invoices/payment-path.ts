/**
 * Every payment is recorded here, whatever brought it (a simulation in test mode, later a gateway or
 * a payment received elsewhere): one row lock on the invoice, one set of status rules, the same
 * events in the same transaction.
 */
import { randomBytes } from 'node:crypto';
import { Knex } from 'knex';
import { acrossTenants, Actor, systemActor } from '../auth/actor';
import { businessClock } from '../clock';
import { BusinessClocks } from '../db/clocks';
import { Database } from '../db/database';
import { isUniqueViolation } from '../db/errors';
import { AppError, InvalidState, NotFound, ValidationFailed } from '../errors';
import { Outbox } from '../events/outbox';
import { Metadata } from '../metadata/schema';
import { indexMetadata, initialMetadata } from '../metadata/store';
import { collectMinor, displayAmount } from '../money/amount';
import { Payment } from '../payments/model';
import { toPaymentView } from '../payments/view';
import { invoiceDetail } from './detail';
import { InvoiceLinks } from './links';
import { amountDue, Invoice, PAYABLE_STATUSES } from './model';
import { ExternalPayment, RecordedPayment } from './schema';

/** What brought the money, as stored on the payment. */
export interface PaymentSource {
  method: string;
  gateway: string;
  /** The gateway's payment id, or the reference given for a payment received elsewhere. */
  gatewayReference: string | null;
  /** When the money was taken, if not now (a payment received elsewhere, earlier). */
  paidAt?: string;
  metadata?: Metadata;
}

/** 403 for a test-mode-only action under a live key. */
export class TestModeOnly extends AppError {
  static readonly code = 'test_mode_only';

  constructor(message = 'Payments can be simulated only with a test key (svc_test_…)') {
    super(403, TestModeOnly.code, message);
  }
}

export class PaymentPath {
  constructor(
    private readonly db: Database,
    private readonly outbox: Outbox,
    private readonly links: InvoiceLinks,
    private readonly clocks: BusinessClocks,
  ) {}

  private readonly recordedListeners: ((actor: Actor, invoiceId: number) => Promise<void>)[] = [];

  /** Runs `listener` after a payment recorded by `record` commits (the gateway expires a checkout for the old amount due); it handles its own errors. */
  whenRecorded(listener: (actor: Actor, invoiceId: number) => Promise<void>): void {
    this.recordedListeners.push(listener);
  }

  /**
   * A payment taken outside the service (a shop's checkout, a bank transfer), in live or test
   * mode: `gateway: "external"`, the same rules and events as every other payment.
   */
  recordExternal(actor: Actor, invoiceId: number, input: ExternalPayment): Promise<RecordedPayment> {
    return this.record(actor, invoiceId, input.amount, {
      method: input.method,
      gateway: 'external',
      gatewayReference: input.reference || null,
      ...(input.paid_at ? { paidAt: input.paid_at.toISOString() } : {}),
      metadata: initialMetadata(input.metadata),
    });
  }

  /** Test mode: a succeeded payment of `amount` (default: the amount due), as a gateway would report it. */
  simulate(actor: Actor, invoiceId: number, amount?: number): Promise<RecordedPayment> {
    if (actor.livemode) throw new TestModeOnly();
    return this.record(actor, invoiceId, amount, { method: 'simulated', gateway: 'test', gatewayReference: `sim_${randomBytes(12).toString('hex')}` });
  }

  /**
   * Test mode: a payment attempt that failed, as a gateway reports a delayed method's failure
   * (`payment.failed` with the invoice and the reason); the invoice does not change.
   */
  async simulateFailure(actor: Actor, invoiceId: number, reason = 'The payment failed (simulated in test mode)'): Promise<void> {
    if (actor.livemode) throw new TestModeOnly();
    await this.db.transaction(async (trx) => {
      const invoice = await Invoice.findOwn(actor, trx, invoiceId);
      if (!invoice) throw new NotFound('Invoice', invoiceId);
      await this.recordFailure(trx, actor, invoice, reason);
    });
  }

  /** `payment.failed` for `invoice`, in the caller's transaction: a gateway's failed attempt or a simulated one. */
  async recordFailure(trx: Knex.Transaction, actor: Actor, invoice: Invoice, reason: string): Promise<void> {
    await this.outbox.record(trx, actor, 'payment.failed', { invoice: await invoiceDetail(actor, invoice, trx, this.links), reason });
  }

  /** The owner's CLI: a simulated payment on a test-mode invoice of any business, acting for that business. */
  async simulateForOwner(invoiceId: number, amount?: number): Promise<RecordedPayment> {
    const invoice = await Invoice.acrossTenants(acrossTenants('cli payment simulation'), this.db.current).findById(invoiceId);
    if (!invoice) throw new NotFound('Invoice', invoiceId);
    if (invoice.livemode) throw new TestModeOnly('payments can be simulated only in test mode (this invoice is live)');
    const actor = systemActor('cli', { businessId: invoice.business_id, livemode: false });
    return this.clocks.actFor(actor, () => this.simulate(actor, invoiceId, amount));
  }

  /**
   * Records a succeeded payment of `amount` major units (default: the amount due) and fires
   * `payment.received`, and `invoice.paid` when it settles the invoice. The invoice row is locked
   * for the whole transaction, so concurrent payments queue and can never over-pay or lose an update.
   */
  async record(actor: Actor, invoiceId: number, amount: number | undefined, source: PaymentSource): Promise<RecordedPayment> {
    return this.db.transaction(async (trx) => {
      const invoice = await Invoice.of(actor, trx).findById(invoiceId).forUpdate();
      if (!invoice) throw new NotFound('Invoice', invoiceId);
      if (!PAYABLE_STATUSES.includes(invoice.status)) throw new InvalidState(`A ${invoice.status} invoice cannot be paid`);
      const due = amountDue(invoice);
      if (due <= 0) throw new InvalidState('Nothing is due on this invoice');
      const errors = new Map<string, string[]>();
      const minor = amount === undefined ? due : collectMinor(errors, 'amount', amount, invoice.currency);
      if (minor > due) errors.set('amount', [`must not exceed the amount due (${displayAmount(due, invoice.currency)})`]);
      if (errors.size) throw new ValidationFailed(Object.fromEntries(errors));
      const { payment, invoice: detail } = await this.apply(trx, actor, invoice, minor, source);
      // After the commit, never inside it: the listeners call the payment gateway.
      for (const listener of this.recordedListeners) this.db.afterCommit(() => listener(actor, invoiceId));
      return { payment, invoice: detail };
    });
  }

  /**
   * Money a gateway has taken: recorded whatever the invoice's state, once per gateway reference
   * (the unique index decides, so a repeated or concurrent notification finds the payment there).
   * Only what is due counts towards the invoice; `excess` is what was taken beyond it (an
   * overpayment, or a payment for a paid or void invoice), to be refunded.
   */
  async recordFromGateway(
    actor: Actor,
    invoiceId: number,
    minor: number,
    source: PaymentSource & { gatewayReference: string },
    /** Runs in the payment's transaction once it is recorded (the excess refund's reservation commits with the payment). */
    onRecorded?: (trx: Knex.Transaction, recorded: RecordedPayment & { excess: number }) => Promise<void>,
  ): Promise<RecordedPayment & { excess: number; duplicate: boolean }> {
    const existing = () => Payment.of(actor, this.db.current).findOne({ gateway: source.gateway, unique_reference: source.gatewayReference });
    const earlier = await existing();
    if (earlier) return this.alreadyRecorded(actor, earlier);
    try {
      return await this.db.transaction(async (trx) => {
        const invoice = await Invoice.of(actor, trx).findById(invoiceId).forUpdate();
        if (!invoice) throw new NotFound('Invoice', invoiceId);
        const recorded = await this.apply(trx, actor, invoice, minor, source, { unique: true });
        await onRecorded?.(trx, recorded);
        return { ...recorded, duplicate: false };
      });
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      const raced = await existing();
      if (!raced) throw err;
      return this.alreadyRecorded(actor, raced);
    }
  }

  private async alreadyRecorded(actor: Actor, payment: Payment): Promise<RecordedPayment & { excess: number; duplicate: boolean }> {
    const invoice = await Invoice.of(actor, this.db.current).findById(payment.invoice_id);
    if (!invoice) throw new NotFound('Invoice', payment.invoice_id);
    return { payment: toPaymentView(payment), invoice: await invoiceDetail(actor, invoice, this.db.current, this.links), excess: 0, duplicate: true };
  }

  /**
   * Inserts the payment on a locked invoice, counts what is due of it, and writes the events.
   * `unique`: the reference is a gateway's payment id, recorded once (the unique index says so).
   */
  private async apply(
    trx: Knex.Transaction,
    actor: Actor,
    invoice: Invoice,
    minor: number,
    source: PaymentSource,
    options: { unique?: boolean } = {},
  ): Promise<RecordedPayment & { excess: number }> {
    const due = PAYABLE_STATUSES.includes(invoice.status) ? amountDue(invoice) : 0;
    const counted = Math.min(minor, due);
    const now = source.paidAt ?? businessClock.now().toISOString();
    const payment = await Payment.of(actor, trx).insert({
      ...Payment.ownedBy(actor),
      invoice_id: invoice.id,
      client_id: invoice.client_id,
      amount: minor,
      amount_refunded: 0,
      amount_applied: counted,
      currency: invoice.currency,
      status: 'succeeded',
      method: source.method,
      gateway: source.gateway,
      gateway_reference: source.gatewayReference,
      unique_reference: options.unique ? source.gatewayReference : null,
      paid_at: now,
      metadata: source.metadata ?? {},
    });
    await indexMetadata(trx, actor, { type: 'payment', id: payment.id }, source.metadata ?? {}, { replace: false });
    const settled = counted > 0 && counted === due;
    if (counted > 0) {
      await invoice.$query(trx).patch({ amount_paid: invoice.amount_paid + counted, status: settled ? 'paid' : 'partial', ...(settled ? { paid_at: now } : {}) });
    }
    const detail = await invoiceDetail(actor, invoice, trx, this.links);
    const paymentView = toPaymentView(payment);
    await this.outbox.record(trx, actor, 'payment.received', { payment: paymentView, invoice: detail });
    if (settled) await this.outbox.record(trx, actor, 'invoice.paid', { invoice: detail });
    return { payment: paymentView, invoice: detail, excess: minor - counted };
  }
}
