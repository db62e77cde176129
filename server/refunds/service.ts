/**
 * Refunds, all through here: one asked for through the API, one made in a gateway's own dashboard,
 * and the excess of a gateway payment that took more than was due. A payment's `amount_refunded`
 * is reserved under the invoice's and the payment's row locks before a gateway is asked (outside
 * any transaction), so two refunds can never return more than was paid.
 *
 * A reserved refund is `pending` until its outcome at the gateway is known. Only a clear refusal
 * releases it; when the answer is lost (a timeout, a dropped connection, the gateway's 5xx) it stays
 * pending with its reservation and its one idempotency key, and whoever resumes it (a retry of the
 * request, the gateway's notification, the reconciliation sweep) first reads it back from the
 * gateway and sends it, under the same key, only if the gateway has none.
 */
import { Knex } from 'knex';
import { Logger } from 'pino';
import { acrossTenants, Actor, systemActor } from '../auth/actor';
import { Clock, systemClock } from '../clock';
import { Business } from '../businesses/model';
import { BusinessClocks } from '../db/clocks';
import { Database } from '../db/database';
import { GatewayError, InvalidState, NotFound, ValidationFailed } from '../errors';
import { Outbox } from '../events/outbox';
import { GatewayRefund, GatewayRefused } from '../gateways/gateway';
import { GatewayClients, providerAccepts, smallestAccepted } from '../gateways/clients';
import { GATEWAY_PROVIDERS, GatewayProvider } from '../gateways/model';
import { firstPagesByMode, ListParams, Page, paginate } from '../http/pagination';
import { invoiceDetail } from '../invoices/detail';
import { InvoiceLinks } from '../invoices/links';
import { amountDue, Invoice } from '../invoices/model';
import { bookMoney } from '../invoices/settlement';
import { JobQueue } from '../jobs/engine';
import { Metadata } from '../metadata/schema';
import { initialMetadata } from '../metadata/store';
import { collectMinor, toMajor } from '../money/amount';
import { TestModeOnly } from '../invoices/payment-path';
import { Payment } from '../payments/model';
import { toPaymentView } from '../payments/view';
import { Refund } from './model';
import { RefundInput, RefundListParams, RefundResult, RefundView } from './schema';
import { toRefundView } from './view';

/** Gateways whose payments are refunded at the gateway; others (`external`, `test`) are recorded only. */
function isOnline(gateway: string | null): gateway is GatewayProvider {
  return (GATEWAY_PROVIDERS as readonly string[]).includes(gateway ?? '');
}

/** An amount the gateway cannot return exactly is the caller's to change (422 naming `field`), never sent to be refused. */
function refuseInexact(provider: GatewayProvider, minor: number, currency: string, field = 'amount'): void {
  if (providerAccepts(provider, minor, currency)) return;
  const step = smallestAccepted(provider, currency);
  const hint = step ? `: use a multiple of ${toMajor(step, currency)} ${currency}` : '';
  throw new ValidationFailed({ [field]: [`the payment gateway cannot return exactly ${toMajor(minor, currency)} ${currency}${hint}`] });
}

/** A new pending refund is left to the request (or notification) that made it for this long before the sweep reads it back. */
const RECONCILE_AFTER_MS = 60_000;
/** A pending refund whose outcome the sweep could not learn is read back again after this long. */
const RECONCILE_AGAIN_MS = 5 * 60_000;
/** Rows the sweep claims at once, and how long its claim holds a row away from other processes. */
const RECONCILE_BATCH = 10;
const RECONCILE_LEASE_SECONDS = 120;

const RECONCILIATION = acrossTenants('refund reconciliation');
const EXCESS_REASON = 'Overpayment: more than was due on the invoice';
const DASHBOARD_REASON = 'Refunded at the payment gateway';

/** What a refund changes, decided under the row locks. */
interface Planned {
  minor: number;
  reason: string | null;
  metadata: Metadata;
}

/**
 * How a pending refund is taken further: `first` sends a refund just reserved; `resume` reads back
 * one that may have been sent, and sends it (under its same key) only if the gateway has none.
 */
type Step = 'first' | 'resume';

/** The same key on every attempt of one refund: the gateway makes it once. */
const gatewayKeyOf = (refund: Refund) => `refund-${refund.business_id}-${refund.id}`;

/** 502 for a refund whose outcome at the gateway is not known: it stays pending, and a retry (or the sweep) settles it. */
const outcomeUnknown = (refund: Refund) =>
  new GatewayError(
    `The payment gateway did not answer clearly, so refund ${refund.id} may or may not have been made; it stays pending (GET /refunds/${refund.id}) and is never made twice. Retry with the same Idempotency-Key, or let the reconciliation settle it.`,
  );

export class RefundService {
  /**
   * The reconciliation sweep, a job kind of the engine (the scheduler starts it): claims due pending
   * refunds (one process per refund, under a lease), reads each back from its gateway, settles it, or
   * sends it under its own key when the gateway has none. One whose outcome is still unknown is read
   * again later, with no end.
   */
  readonly reconciliation: JobQueue<Refund>;

  constructor(
    private readonly db: Database,
    private readonly outbox: Outbox,
    private readonly gateways: GatewayClients,
    private readonly logger: Logger,
    private readonly links: InvoiceLinks,
    /** Each business's clock: a refund settled in the background is dated by it, as one settled in a request. */
    private readonly clocks: BusinessClocks,
    private readonly clock: Clock = systemClock,
  ) {
    this.reconciliation = new JobQueue(db, logger, {
      label: 'refund reconciliation',
      model: Refund,
      access: RECONCILIATION,
      batch: RECONCILE_BATCH,
      leaseSeconds: RECONCILE_LEASE_SECONDS,
      clock,
      schedule: (_attemptsMade, now) => new Date(now.getTime() + RECONCILE_AGAIN_MS),
      // `advance` books the outcome itself; the engine's record then finds the row no longer pending.
      statuses: { done: 'succeeded', failed: 'failed' },
      work: (refund) => {
        const actor = systemActor('payment gateway', { businessId: refund.business_id, livemode: refund.livemode });
        return this.clocks.actFor(actor, () => this.advance(actor, refund, 'resume')).then(
          () => ({ done: {} }),
          () => ({ failed: {} }), // logged by advance
        );
      },
    });
  }

  list(actor: Actor, params: RefundListParams): Promise<Page<RefundView>> {
    const query = Refund.of(actor, this.db.current);
    if (params.payment_id) query.where('refunds.payment_id', params.payment_id);
    if (params.invoice_id) query.where('refunds.invoice_id', params.invoice_id);
    if (params.status) query.where('refunds.status', params.status);
    return paginate(query, Refund.tableName, params, toRefundView);
  }

  /**
   * The owner's CLI (`invoicing refunds list`): a business's refunds, in one mode or both, oldest
   * first, through the same tenant-scoped list as the API (its filters; 100 per mode at most).
   */
  async listForOwner(businessId: number, filters: Omit<RefundListParams, keyof ListParams> & { mode?: 'live' | 'test' }): Promise<{ data: RefundView[]; more: boolean }> {
    if (!(await Business.query(this.db.current).findById(businessId))) throw new NotFound('Business', businessId);
    const { mode, ...where } = filters;
    return firstPagesByMode(businessId, mode, (actor, page) => this.list(actor, { ...where, ...page }));
  }

  async get(actor: Actor, id: number): Promise<RefundView> {
    const row = await Refund.of(actor, this.db.current).findById(id);
    if (!row) throw new NotFound('Refund', id);
    return toRefundView(row);
  }

  /**
   * `POST /payments/{id}/refund`: all or part of what is left of a succeeded payment. `requestKey`
   * (the request's Idempotency-Key): a refund already made under it is answered again, and one left
   * pending (its answer lost, or its process died) is resumed, so a retry never refunds twice.
   */
  refund(actor: Actor, paymentId: number, input: RefundInput, requestKey?: string): Promise<RefundResult> {
    return this.perform(actor, paymentId, requestKey ?? null, input, (payment, left) => {
      if (left <= 0) throw new InvalidState('This payment is already fully refunded');
      const errors = new Map<string, string[]>();
      const minor = input.amount === undefined ? left : collectMinor(errors, 'amount', input.amount, payment.currency);
      if (minor > left) errors.set('amount', [`must not exceed what is left of the payment (${toMajor(left, payment.currency)} ${payment.currency})`]);
      if (errors.size) throw new ValidationFailed(Object.fromEntries(errors));
      return { minor, reason: input.reason || null, metadata: initialMetadata(input.metadata) };
    });
  }

  /**
   * Reserves the refund of the part of a gateway payment beyond what was due (an overpayment, or a
   * paid or void invoice), in the transaction that records the payment (its invoice locked): if the
   * process dies before `sendReserved`, the sweep finds it pending and sends it.
   */
  async reserveExcess(trx: Knex.Transaction, actor: Actor, paymentId: number, excess: number): Promise<Refund | null> {
    const payment = await Payment.of(actor, trx).findById(paymentId).forUpdate();
    if (!payment) throw new NotFound('Payment', paymentId);
    const minor = Math.min(excess, payment.amount - payment.amount_refunded);
    if (minor <= 0) return null;
    return this.reserve(trx, actor, payment, { minor, reason: EXCESS_REASON, metadata: {} }, null);
  }

  /** Sends a refund reserved by `reserveExcess`, after its transaction committed. */
  sendReserved(actor: Actor, refund: Refund): Promise<RefundResult> {
    return this.advance(actor, refund, 'first');
  }

  /**
   * A gateway reports that `amountRefunded` (in all) has been returned on one of its payments
   * (Stripe's `charge.refunded`, which names no refund). The payment's refunds are read back from
   * the gateway and each applied as `recordRefundUpdate` does: our pending ones are settled, and
   * one made in the gateway's dashboard is recorded once, with its id. If they cannot be read, what
   * the total shows beyond our own refunds (pending reservations included, so nothing is counted
   * twice) is recorded without an id. Repeated or late notifications change nothing. False when
   * the payment is not one of this actor's.
   */
  async recordGatewayRefund(actor: Actor, gateway: string, paymentReference: string, amountRefunded: number, refundReference: string | null): Promise<boolean> {
    const found = await Payment.of(actor, this.db.current).findOne({ gateway, unique_reference: paymentReference });
    if (!found) return false;
    let reported: GatewayRefund[];
    try {
      reported = await (await this.gateways.of(actor.businessId)).listRefunds(paymentReference);
    } catch (err) {
      this.logger.warn({ err, businessId: actor.businessId, paymentId: found.id }, 'the gateway\'s refunds could not be read back; recording what its refunded total shows');
      await this.db.transaction(async (trx) => {
        const { invoice, payment } = await this.lockBoth(trx, actor, found);
        const unrecorded = Math.min(amountRefunded, payment.amount) - payment.amount_refunded;
        if (unrecorded <= 0) return;
        const refund = await this.insert(trx, actor, payment, { minor: unrecorded, reason: DASHBOARD_REASON, metadata: {} }, { status: 'succeeded', reference: refundReference });
        await this.settle(trx, actor, invoice, payment, refund);
      });
      return true;
    }
    // The gateway lists the newest first; they are booked in the order they were made.
    for (const one of reported.reverse()) await this.applyReported(actor, found, one);
    return true;
  }

  /**
   * A gateway reports one refund's state (Stripe's `charge.refund.updated`): a pending refund of
   * ours is settled or released by it, a made one that the bank failed counts as paid again, and
   * one made in the gateway's dashboard is recorded. False when the payment is not this actor's.
   */
  async recordRefundUpdate(actor: Actor, gateway: string, paymentReference: string, reported: GatewayRefund): Promise<boolean> {
    const found = await Payment.of(actor, this.db.current).findOne({ gateway, unique_reference: paymentReference });
    if (!found) return false;
    await this.applyReported(actor, found, reported);
    return true;
  }

  /**
   * Test mode: a refund fails at the bank, as a gateway reports it for a live one (the amount counts
   * as paid again; `payment.refund_failed`). For `invoicing trigger payment.refund_failed`.
   */
  async simulateBankFailure(actor: Actor, refundId: number): Promise<RefundResult> {
    if (actor.livemode) throw new TestModeOnly('A refund\'s bank failure can be simulated only in test mode');
    return this.db.transaction(async (trx) => {
      const found = await Refund.of(actor, trx).findById(refundId);
      if (!found) throw new NotFound('Refund', refundId);
      const { invoice, payment } = await this.lockBoth(trx, actor, { id: found.payment_id, invoice_id: found.invoice_id });
      const refund = await Refund.of(actor, trx).findById(refundId).forUpdate();
      if (refund?.status !== 'succeeded') throw new InvalidState('Only a succeeded refund can fail at the bank');
      return this.failAfterSuccess(trx, actor, invoice, payment, refund, 'The bank could not return the money (simulated in test mode)');
    });
  }

  /**
   * Returns `minor` of a locked invoice's payments for its credit note, newest payment first, in the
   * credit note's transaction: a recorded payment's refund is booked at once (`payment.refunded`);
   * a gateway's is reserved, and the caller sends it with `sendReserved` once the transaction has
   * committed. Refused when the payments hold less than that to return (a refund of theirs is still
   * pending) or a gateway cannot return a part exactly.
   */
  async refundForCreditNote(trx: Knex.Transaction, actor: Actor, invoice: Invoice, minor: number, creditNote: { id: number; number: string }): Promise<{ refunds: Refund[]; reserved: Refund[] }> {
    const payments = await Payment.of(actor, trx).where({ 'payments.invoice_id': invoice.id, 'payments.status': 'succeeded' }).orderBy('payments.id', 'desc').forUpdate();
    const parts: { payment: Payment; minor: number }[] = [];
    let left = minor;
    for (const payment of payments) {
      const part = Math.min(left, payment.amount - payment.amount_refunded);
      if (part <= 0) continue;
      if (isOnline(payment.gateway)) refuseInexact(payment.gateway, part, payment.currency, 'refund');
      parts.push({ payment, minor: part });
      left -= part;
      if (left === 0) break;
    }
    if (left > 0) {
      throw new InvalidState(`The invoice's payments hold ${toMajor(minor - left, invoice.currency)} ${invoice.currency} to refund, less than the ${toMajor(minor, invoice.currency)} this credit note would refund (a refund of theirs may still be pending); credit less, or settle it outside the service (refund: false)`);
    }
    const refunds: Refund[] = [];
    const reserved: Refund[] = [];
    for (const { payment, minor: part } of parts) {
      const planned = { minor: part, reason: `Credit note ${creditNote.number}`, metadata: {} };
      if (isOnline(payment.gateway)) {
        const refund = await this.reserve(trx, actor, payment, planned, null, creditNote.id);
        refunds.push(refund);
        reserved.push(refund);
      } else {
        const refund = await this.insert(trx, actor, payment, planned, { status: 'succeeded', creditNoteId: creditNote.id });
        await this.settle(trx, actor, invoice, payment, refund);
        refunds.push(refund);
      }
    }
    return { refunds, reserved };
  }

  /** Reconciles the pending refunds due now (as a sweep does; several at once share them as processes do); returns how many. */
  reconcileDue(): Promise<number> {
    return this.reconciliation.drain();
  }

  /**
   * Decides the refund under the invoice's and the payment's locks. A recorded payment is refunded
   * in that one transaction; a gateway's is reserved, then asked for at the gateway.
   */
  private async perform(actor: Actor, paymentId: number, requestKey: string | null, input: RefundInput, plan: (payment: Payment, left: number) => Planned): Promise<RefundResult> {
    const reserved = await this.db.transaction(async (trx) => {
      const found = await Payment.of(actor, trx).findById(paymentId);
      if (!found) throw new NotFound('Payment', paymentId);
      const { invoice, payment } = await this.lockBoth(trx, actor, found);
      const earlier = requestKey ? await Refund.of(actor, trx).findOne({ request_key: requestKey, payment_id: paymentId }) : undefined;
      if (earlier && input.amount !== undefined && collectMinor(new Map(), 'amount', input.amount, earlier.currency) !== earlier.amount) {
        throw new InvalidState(`This Idempotency-Key already asked for a refund of ${toMajor(earlier.amount, earlier.currency)} ${earlier.currency}; use a new key for another amount`);
      }
      if (earlier?.status === 'succeeded') return { done: await this.resultOf(trx, actor, invoice, payment, earlier) };
      if (earlier) return { pending: earlier, step: 'resume' as const };
      if (payment.status !== 'succeeded') throw new InvalidState(`A ${payment.status} payment cannot be refunded`);
      const planned = plan(payment, payment.amount - payment.amount_refunded);
      if (!isOnline(payment.gateway)) {
        const refund = await this.insert(trx, actor, payment, planned, { status: 'succeeded', requestKey });
        return { done: await this.settle(trx, actor, invoice, payment, refund) };
      }
      refuseInexact(payment.gateway, planned.minor, payment.currency);
      return { pending: await this.reserve(trx, actor, payment, planned, requestKey), step: 'first' as const };
    });
    if (reserved.done) return reserved.done;
    return this.advance(actor, reserved.pending, reserved.step);
  }

  /** A pending refund and its reservation in the payment's `amount_refunded`, under the locks. */
  private async reserve(trx: Knex.Transaction, actor: Actor, payment: Payment, planned: Planned, requestKey: string | null, creditNoteId: number | null = null): Promise<Refund> {
    const refund = await this.insert(trx, actor, payment, planned, { status: 'pending', requestKey, creditNoteId });
    await payment.$query(trx).patch({ amount_refunded: payment.amount_refunded + planned.minor });
    return refund;
  }

  /**
   * Takes a pending refund further at its gateway (see Step), outside any transaction. Returns the
   * result once booked; throws GatewayError when the gateway refused (the reservation is released)
   * or its outcome stays unknown (it stays pending).
   */
  private async advance(actor: Actor, refund: Refund, step: Step): Promise<RefundResult> {
    const log = { businessId: actor.businessId, refundId: refund.id, paymentId: refund.payment_id };
    const payment = await Payment.of(actor, this.db.current).findById(refund.payment_id);
    if (!payment) throw new NotFound('Payment', refund.payment_id);
    const key = gatewayKeyOf(refund);
    let reported: GatewayRefund | null = null;
    let sending = false;
    try {
      const gateway = await this.gateways.of(actor.businessId);
      if (step === 'resume') reported = await gateway.findRefund(payment.gateway_reference ?? '', key, refund.gateway_reference);
      sending = true;
      reported ??= await gateway.refund({ paymentReference: payment.gateway_reference ?? '', amount: refund.amount, currency: refund.currency, reason: refund.reason, idempotencyKey: key });
    } catch (err) {
      // Nothing was made: the gateway refused the refund itself (a refused read-back proves
      // nothing), or, before anything was ever sent, there is no gateway.
      if ((sending && err instanceof GatewayRefused) || (step === 'first' && err instanceof NotFound)) {
        await this.release(actor, refund, err.message);
        throw new GatewayError(`The refund was not made: ${err.message}`);
      }
      this.logger.warn({ ...log, err }, 'the refund\'s outcome at the gateway is unknown; it stays pending, with its reservation and its idempotency key');
      throw outcomeUnknown(refund);
    }
    const result = await this.db.transaction(async (trx) => {
      const { invoice, payment: locked } = await this.lockBoth(trx, actor, payment);
      const current = await Refund.of(actor, trx).findById(refund.id).forUpdate();
      if (!current) throw new NotFound('Refund', refund.id);
      // Settled meanwhile (a notification, the sweep, a retry): nothing more to book.
      if (current.status !== 'pending') return { current, booked: await this.resultOf(trx, actor, invoice, locked, current) };
      return { current, booked: await this.conclude(trx, actor, invoice, locked, current, reported) };
    });
    if (result.current.status === 'failed') throw new GatewayError(`The refund was not made: ${result.current.failure_reason ?? 'refused'}`);
    return result.booked;
  }

  /** The gateway refused before anything was made: the reservation goes and the refund is failed. */
  private async release(actor: Actor, refund: Refund, reason: string): Promise<void> {
    this.logger.warn({ businessId: actor.businessId, refundId: refund.id, reason }, 'the gateway did not make a refund; its reservation is released');
    await this.db.transaction(async (trx) => {
      const { payment } = await this.lockBoth(trx, actor, { id: refund.payment_id, invoice_id: refund.invoice_id });
      const current = await Refund.of(actor, trx).findById(refund.id).forUpdate();
      if (current?.status === 'pending') await this.releaseLocked(trx, payment, current, reason);
    });
  }

  private async releaseLocked(trx: Knex.Transaction, payment: Payment, refund: Refund, reason: string): Promise<void> {
    await payment.$query(trx).patch({ amount_refunded: payment.amount_refunded - refund.amount });
    // The request's key is freed: a retry of the refused request may try again.
    await refund.$query(trx).patch({ status: 'failed', failure_reason: reason.slice(0, 500), request_key: null, next_attempt_at: null, lease_id: null });
  }

  /** A pending refund's outcome is known (locks held): booked when made, released when it failed. */
  private async conclude(trx: Knex.Transaction, actor: Actor, invoice: Invoice, payment: Payment, refund: Refund, reported: GatewayRefund): Promise<RefundResult> {
    if (reported.outcome === 'failed') {
      await this.releaseLocked(trx, payment, refund, reported.failureReason ?? 'The gateway did not make the refund');
      return this.resultOf(trx, actor, invoice, payment, refund);
    }
    await refund.$query(trx).patch({ status: 'succeeded', gateway_reference: reported.refundReference, unique_reference: reported.refundReference, next_attempt_at: null, lease_id: null });
    // The reservation already counted this refund in `amount_refunded`.
    return this.settle(trx, actor, invoice, payment, refund, { reserved: true });
  }

  /** One refund as its gateway reports it, applied to the payment's refunds under the locks (see recordRefundUpdate). */
  private async applyReported(actor: Actor, found: Payment, reported: GatewayRefund): Promise<void> {
    await this.db.transaction(async (trx) => {
      const { invoice, payment } = await this.lockBoth(trx, actor, found);
      const refund = await this.ours(trx, actor, payment, reported);
      if (refund?.status === 'pending') await this.conclude(trx, actor, invoice, payment, refund, reported);
      else if (refund?.status === 'succeeded' && reported.outcome === 'failed') await this.failAfterSuccess(trx, actor, invoice, payment, refund, reported.failureReason);
      else if (!refund && !reported.idempotencyKey && reported.outcome === 'succeeded') {
        // Made in the gateway's own dashboard: recorded once, with the gateway's id.
        const left = payment.amount - payment.amount_refunded;
        if (left <= 0) return;
        const made = await this.insert(trx, actor, payment, { minor: Math.min(reported.amount, left), reason: DASHBOARD_REASON, metadata: {} }, { status: 'succeeded', reference: reported.refundReference });
        await this.settle(trx, actor, invoice, payment, made);
      }
    });
  }

  /**
   * The refund of ours a gateway reports on, locked: by the gateway's id, by the idempotency key it
   * was made under, or (one recorded from a refunded total, when the gateway's refunds could not be
   * read) the first succeeded one of that amount without an id, which now gets it.
   */
  private async ours(trx: Knex.Transaction, actor: Actor, payment: Payment, reported: GatewayRefund): Promise<Refund | undefined> {
    const byReference = await Refund.of(actor, trx).findOne({ payment_id: payment.id, unique_reference: reported.refundReference }).forUpdate();
    if (byReference) return byReference;
    if (reported.idempotencyKey) {
      const pending = await Refund.of(actor, trx).where({ payment_id: payment.id, status: 'pending' }).forUpdate();
      return pending.find((refund) => gatewayKeyOf(refund) === reported.idempotencyKey);
    }
    const unnamed = await Refund.of(actor, trx).where({ payment_id: payment.id, status: 'succeeded', amount: reported.amount }).whereNull('unique_reference').orderBy('id').first().forUpdate();
    await unnamed?.$query(trx).patch({ gateway_reference: reported.refundReference, unique_reference: reported.refundReference });
    return unnamed;
  }

  /**
   * A refund that had been made failed afterwards (at the bank): nothing was returned after all, so
   * its amount counts as paid again on the payment and, for the part the payment had counted
   * towards it, on the invoice; `payment.refund_failed`. An invoice that cannot take that part
   * back (voided, or paid again by another payment meanwhile) is left as it is: the part no longer
   * counts towards it (the payment's `amount_applied`), so a later refund returns it first and
   * leaves the invoice alone (logged, to be returned).
   */
  private async failAfterSuccess(trx: Knex.Transaction, actor: Actor, invoice: Invoice, payment: Payment, refund: Refund, reason: string | null): Promise<RefundResult> {
    const bookedOthers = await this.bookedTotal(trx, actor, payment, refund);
    const backOnInvoice = this.invoicePart(payment, bookedOthers + refund.amount) - this.invoicePart(payment, bookedOthers);
    const room = invoice.status === 'void' ? 0 : amountDue(invoice);
    const counted = Math.min(backOnInvoice, room);
    const refundedAfter = payment.amount_refunded - refund.amount;
    await refund.$query(trx).patch({ status: 'failed', failure_reason: (reason ?? 'The refund failed at the bank').slice(0, 500) });
    await payment.$query(trx).patch({ amount_refunded: refundedAfter, status: refundedAfter >= payment.amount ? 'refunded' : 'succeeded' });
    if (counted < backOnInvoice) {
      // What the payment counts towards the invoice is min(amount_applied, amount − booked refunds): it grows by `counted` only.
      const counting = Math.min(payment.amount_applied ?? payment.amount, payment.amount - (bookedOthers + refund.amount));
      await payment.$query(trx).patch({ amount_applied: counting + counted });
      this.logger.warn(
        { businessId: actor.businessId, refundId: refund.id, invoiceId: invoice.id, notCountedMinor: backOnInvoice - counted },
        'a refund failed at the bank after its invoice was voided or paid again: the money back does not count towards the invoice and is to be refunded again',
      );
    }
    if (counted > 0) await bookMoney(trx, invoice, { amount_paid: invoice.amount_paid + counted });
    const result = await this.resultOf(trx, actor, invoice, payment, refund);
    await this.outbox.record(trx, actor, 'payment.refund_failed', { ...result });
    return result;
  }

  /** The invoice's row, then the payment's: the order every payment change takes (see PaymentPath.record). */
  private async lockBoth(trx: Knex.Transaction, actor: Actor, payment: Pick<Payment, 'id' | 'invoice_id'>): Promise<{ invoice: Invoice; payment: Payment }> {
    const invoice = await Invoice.of(actor, trx).findById(payment.invoice_id).forUpdate();
    const locked = await Payment.of(actor, trx).findById(payment.id).forUpdate();
    if (!invoice || !locked) throw new NotFound('Payment', payment.id);
    return { invoice, payment: locked };
  }

  private async insert(
    trx: Knex.Transaction,
    actor: Actor,
    payment: Payment,
    planned: Planned,
    { status, reference = null, requestKey = null, creditNoteId = null }: { status: Refund['status']; reference?: string | null; requestKey?: string | null; creditNoteId?: number | null },
  ): Promise<Refund> {
    return Refund.of(actor, trx).insert({
      ...Refund.ownedBy(actor),
      payment_id: payment.id,
      invoice_id: payment.invoice_id,
      amount: planned.minor,
      currency: payment.currency,
      reason: planned.reason,
      status,
      gateway: payment.gateway ?? 'external',
      gateway_reference: reference,
      unique_reference: reference,
      failure_reason: null,
      request_key: requestKey,
      credit_note_id: creditNoteId,
      metadata: planned.metadata,
      attempts: 0,
      next_attempt_at: status === 'pending' ? new Date(this.clock.now().getTime() + RECONCILE_AFTER_MS).toISOString() : null,
      lease_id: null,
    });
  }

  /** What the payment's other succeeded refunds returned (reservations of pending ones are not returned yet). */
  private async bookedTotal(trx: Knex.Transaction, actor: Actor, payment: Payment, refund: Refund): Promise<number> {
    const row = (await Refund.of(actor, trx).where({ payment_id: payment.id, status: 'succeeded' }).whereNot('id', refund.id).sum('amount as total').first()) as unknown as { total: number | string | null } | undefined;
    return Number(row?.total ?? 0);
  }

  /**
   * How much of `refunded` (the payment's succeeded refunds in all) came off the invoice: a refund
   * returns first the part the payment never counted towards it (an overpayment).
   */
  private invoicePart(payment: Payment, refunded: number): number {
    const uncounted = payment.amount - (payment.amount_applied ?? payment.amount);
    return Math.max(0, refunded - uncounted);
  }

  /**
   * Books a succeeded refund: the payment's refunded total and status, the invoice's `amount_paid`
   * (only by what the payment had counted towards it), the invoice's status (invoices/status.ts's
   * one rule), and `payment.refunded`.
   */
  private async settle(trx: Knex.Transaction, actor: Actor, invoice: Invoice, payment: Payment, refund: Refund, { reserved = false } = {}): Promise<RefundResult> {
    const refundedAfter = reserved ? payment.amount_refunded : payment.amount_refunded + refund.amount;
    const bookedBefore = await this.bookedTotal(trx, actor, payment, refund);
    const fromInvoice = Math.min(invoice.amount_paid, this.invoicePart(payment, bookedBefore + refund.amount) - this.invoicePart(payment, bookedBefore));
    await payment.$query(trx).patch({ amount_refunded: refundedAfter, status: refundedAfter >= payment.amount ? 'refunded' : 'succeeded' });
    // A paid invoice reopens (partial, or awaiting payment), unless its credit notes cover what the refund took back.
    if (fromInvoice > 0) await bookMoney(trx, invoice, { amount_paid: invoice.amount_paid - fromInvoice });
    const result = await this.resultOf(trx, actor, invoice, payment, refund);
    await this.outbox.record(trx, actor, 'payment.refunded', { ...result });
    return result;
  }

  private async resultOf(trx: Knex.Transaction, actor: Actor, invoice: Invoice, payment: Payment, refund: Refund): Promise<RefundResult> {
    return { refund: toRefundView(refund), payment: toPaymentView(payment), invoice: await invoiceDetail(actor, invoice, trx, this.links) };
  }
}
