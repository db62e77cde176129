/**
 * One order → at most one invoice, whose status follows what the shop took: issued when the order
 * completes, paid when WooCommerce has it paid (at checkout or later), refunded as the shop refunds,
 * void when the order is cancelled or refunded unpaid. The order's meta (MARKS) records each step,
 * written after it, so whatever starts a run (a delivery, the poll, the order.updated our own write
 * fires) does only what is missing, decided from the order alone. The common case is two API calls:
 * a quick-charge that finds or creates the client and issues the invoice, then the payment (or, for
 * an order not paid yet, the invoice's e-mail). Every call is repeatable: POSTs carry an
 * Idempotency-Key derived from store, order and step, and an order marked as attempted is looked up
 * by its metadata before an invoice is made, so a retry days later finds what an interrupted run
 * made. Work on one order runs one at a time in a process.
 */
import pLimit from 'p-limit';
import { Logger } from 'pino';
import { Clock, systemClock } from '../../server/clock';
import { toMajor, toMinor } from '../../server/money/amount';
import { DEFAULT_VAT_META_KEY, legacyOrderMarker, OrderRefused, orderMetadata, orderToInvoice, orderToPayment, refundedMinor, refundLines, reverseChargeOf, shopRatesOf, StoreIdentity } from './mapping';
import { CLOSED_STATUSES, gmtTime, MARKS, marksOf, OrderMarks, WooOrder } from './order';
import { Invoice, PartnerApi, PartnerError, Payment, PaymentResult } from './partner';
import { WooStore } from './store';

export type Change = 'invoiced' | 'paid' | 'refunded' | 'voided';

export type Outcome =
  | { action: 'updated'; invoice_id: number; number: string | null; changes: Change[] }
  | { action: 'skipped'; reason: string }
  | { action: 'refused'; reason: string };

/** API answers that no retry changes: the bridge's request itself is refused. */
const PERMANENT = [400, 404, 422];

/** Invoice statuses in which the e-mail of an unpaid order's invoice is still to go (a draft left by the earlier bridge, or just issued). */
const SENDABLE = ['draft', 'sent'];

/** The metadata value that marks the bridge's reverse-charge rate, and the text it prints. */
const REVERSE_CHARGE_KEY = 'reverse-charge';
const REVERSE_CHARGE_TEXT = 'Reverse charge: VAT to be accounted for by the recipient (Article 196, Council Directive 2006/112/EC)';

/** The API's limit on a credit note's memo. */
const MAX_MEMO = 5000;

/** Orders worked on at once: a burst of deliveries would otherwise meet the API's per-key rate limit all together. */
export const ORDER_CONCURRENCY = 4;

export interface BridgeIdentity {
  store: StoreIdentity;
  /**
   * Orders created before this time (ISO 8601) may have an invoice the earlier bridge made and never
   * recorded on the order, known only by the marker in its notes; unset when no earlier bridge ran.
   */
  legacyOrdersBefore?: string;
  /** The order meta key of a B2B buyer's VAT number (`woo connect --vat-meta-key`); default `_billing_vat_number`. */
  vatMetaKey?: string;
}

/** What one run has found and done for an order: the marks to write and what the order's note will say. */
interface Run {
  order: WooOrder;
  marks: OrderMarks;
  /** The order's invoice as last seen; null until found or made. */
  invoice: Invoice | null;
  payment: Payment | null;
  marksToWrite: Record<string, string>;
  done: string[];
  changes: Change[];
}

export class OrderBridge {
  private readonly running = new Map<number, Promise<Outcome>>();
  private readonly slots = pLimit(ORDER_CONCURRENCY);

  constructor(
    private readonly store: WooStore,
    private readonly partner: PartnerApi,
    private readonly identity: BridgeIdentity,
    private readonly logger: Logger,
    /** The bridge's own time (the shop's side): when it tried an order, when a payment it records was taken. */
    private readonly clock: Clock = systemClock,
  ) {}

  /** Our tax rate ids by shop rate key (see taxRateIds). */
  private readonly taxRates = new Map<string, number>();

  /**
   * Brings the order's invoice up to date with the order as the store has it now (not as a webhook
   * said it was). Calls for the same order queue behind each other; failures are logged and thrown.
   */
  handle(orderId: number): Promise<Outcome> {
    const previous = this.running.get(orderId) ?? Promise.resolve(undefined);
    const next = previous.catch(() => undefined).then(() => this.slots(() => this.process(orderId)));
    this.running.set(orderId, next);
    const cleanup = () => {
      if (this.running.get(orderId) === next) this.running.delete(orderId);
    };
    next.then(cleanup, cleanup);
    return next;
  }

  /** Resolves when no order is being processed (for shutdown and tests). */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.allSettled([...this.running.values()]);
  }

  /** Whether the order asks for something its marks do not show done: decided from the order alone, without the API. */
  needsWork(order: WooOrder): boolean {
    const marks = marksOf(order);
    if (marks.invoiceId === null) {
      // A cancelled order has something to void only if a run may have made an invoice before it stopped.
      return order.status === 'completed' || (CLOSED_STATUSES.includes(order.status) && this.mayHaveUnmarkedInvoice(order, marks));
    }
    if (order.status === 'completed' && isPaid(order) && marks.paymentId === null) return true;
    if (CLOSED_STATUSES.includes(order.status) && !marks.voided) return true;
    try {
      return marks.paymentId !== null && refundedMinor(order) > marks.refundedMinor;
    } catch (err) {
      if (err instanceof OrderRefused) return true; // the run refuses it, with a note
      throw err;
    }
  }

  private async process(orderId: number): Promise<Outcome> {
    const log = this.logger.child({ order_id: orderId });
    let order: WooOrder | undefined;
    let outcome: Outcome;
    try {
      order = await this.store.order(orderId);
      outcome = await this.reconcile(order);
    } catch (err) {
      if (err instanceof OrderRefused) {
        outcome = { action: 'refused', reason: err.reason };
      } else if (err instanceof PartnerError && PERMANENT.includes(err.status)) {
        // The API refused the request itself (a field it does not accept): retrying cannot change that.
        outcome = { action: 'refused', reason: err.message };
      } else {
        log.error({ err }, 'order processing failed; the next poll tries again');
        throw err;
      }
    }
    if (outcome.action === 'refused') {
      log.warn({ reason: outcome.reason }, 'order refused');
      if (order) await this.noteRefusal(order, outcome.reason, log);
    } else if (outcome.action === 'updated') {
      log.info(outcome, `order ${outcome.changes.join(', ')}`);
    }
    return outcome;
  }

  private async reconcile(order: WooOrder): Promise<Outcome> {
    const marks = marksOf(order);
    if (!this.needsWork(order)) return upToDate(order, marks.invoiceId);
    const run: Run = { order, marks, invoice: null, payment: null, marksToWrite: {}, done: [], changes: [] };
    try {
      await this.follow(run);
    } catch (err) {
      // What was done before the failure is recorded, so the next run starts from there.
      await this.record(run).catch((recordErr: unknown) => this.logger.warn({ err: recordErr, order_id: order.id }, 'order marks not written'));
      throw err;
    }
    await this.record(run);
    const invoiceId = run.invoice?.id ?? marks.invoiceId;
    return run.changes.length && invoiceId
      ? { action: 'updated', invoice_id: invoiceId, number: run.invoice?.number ?? null, changes: run.changes }
      : upToDate(order, invoiceId);
  }

  /** Each step the order asks for, in the order money moves: invoice, payment, refunds, void. */
  private async follow(run: Run): Promise<void> {
    const { order, marks } = run;
    if (marks.invoiceId === null) {
      if (order.status === 'completed') {
        await this.invoice(run);
      } else {
        run.invoice = await this.earlierInvoice(order);
        if (!run.invoice) return;
        run.marksToWrite[MARKS.invoice] = String(run.invoice.id);
      }
    }
    if (order.status === 'completed' && isPaid(order) && marks.paymentId === null) await this.recordPayment(run);
    const paymentId = run.payment?.id ?? marks.paymentId;
    if (paymentId !== null && refundedMinor(order) > marks.refundedMinor) await this.refund(run, paymentId);
    if (CLOSED_STATUSES.includes(order.status) && !marks.voided) await this.voidUnpaid(run);
  }

  /**
   * The order's invoice, issued: found if a run made it before (the order is marked as attempted, or
   * is older than the upgrade from the earlier bridge), else made by one quick-charge. The invoice of
   * an order not paid yet is e-mailed, so the customer has something to pay; a paid one's is not.
   */
  private async invoice(run: Run): Promise<void> {
    const { order, marks } = run;
    const vatNumber = reverseChargeOf(order, this.identity.vatMetaKey ?? DEFAULT_VAT_META_KEY);
    const reverseCharge = vatNumber ? { rateId: await this.reverseChargeRate(), vatNumber } : undefined;
    const draft = orderToInvoice(order, this.identity.store, reverseCharge ? new Map() : await this.taxRateIds(order), reverseCharge);
    const paid = isPaid(order);
    let invoice = this.mayHaveUnmarkedInvoice(order, marks) ? await this.earlierInvoice(order) : null;
    if (invoice && toMinor(invoice.total, invoice.currency) !== draft.totalMinor) {
      throw new OrderRefused(
        `invoice ${label(invoice)}, made for this order earlier, totals ${invoice.total} ${invoice.currency} but the order now totals ${toMajor(draft.totalMinor, draft.currency)} ${draft.currency}: void it to invoice the order again`,
      );
    }
    if (!invoice) {
      // Written before the invoice exists: if this run stops after making it, the next one looks it up.
      if (!marks.attempted) await this.store.mark(order.id, { [MARKS.attempt]: this.clock.now().toISOString() });
      const { client, currency, items, tax_exempt, rounding_amount, notes, metadata, issue_date } = draft;
      if (client.tax_id) await this.giveVatNumber(client.email, client.tax_id);
      try {
        ({ invoice } = await this.partner.quickCharge({ client, currency, items, tax_exempt, rounding_amount, notes, metadata, issue_date }, this.key(order, 'charge')));
      } catch (err) {
        if (err instanceof PartnerError && err.code === 'idempotency_key_reused') {
          throw new OrderRefused('the order changed (other items or another client) after an invoice was made for it in the last 24 hours: it can be invoiced again once that invoice is void and the 24 hours have passed');
        }
        throw err;
      }
    }
    if (!paid && SENDABLE.includes(invoice.status)) invoice = await this.partner.sendInvoice(invoice.id, this.key(order, 'send'));
    // A paid order's draft (left by the earlier bridge) is issued without an e-mail, to take its payment.
    else if (paid && invoice.status === 'draft') await this.partner.issueInvoice(invoice.id, this.key(order, 'issue'));
    run.invoice = invoice;
    run.marksToWrite[MARKS.invoice] = String(invoice.id);
    run.done.push(paid ? `issued to ${draft.client.email}` : `sent to ${draft.client.email}`);
    run.changes.push('invoiced');
  }

  /** The invoice an earlier run made for the order: by its metadata, else (orders from before the upgrade) by the earlier bridge's marker. */
  private async earlierInvoice(order: WooOrder): Promise<Invoice | null> {
    const live = (invoice: Invoice) => invoice.status !== 'void';
    const found = await this.partner.findInvoiceByMetadata(orderMetadata(this.identity.store, order), live);
    if (found || !this.createdBeforeUpgrade(order)) return found;
    const email = order.billing?.email?.trim();
    const client = email ? await this.partner.findClientByEmail(email) : null;
    const marker = legacyOrderMarker(this.identity.store.id, order);
    return client ? this.partner.findInvoice(client.id, (invoice) => live(invoice) && (invoice.notes ?? '').includes(marker)) : null;
  }

  private mayHaveUnmarkedInvoice(order: WooOrder, marks: OrderMarks): boolean {
    return marks.attempted || this.createdBeforeUpgrade(order);
  }

  private createdBeforeUpgrade(order: WooOrder): boolean {
    const { legacyOrdersBefore } = this.identity;
    // An order without a creation date is looked up too: a lookup costs less than a second invoice.
    return legacyOrdersBefore !== undefined && !(gmtTime(order.date_created_gmt) >= Date.parse(legacyOrdersBefore));
  }

  /** What the shop took, recorded on the invoice as a payment received elsewhere. */
  private async recordPayment(run: Run): Promise<void> {
    const { order } = run;
    const invoiceId = run.invoice?.id ?? run.marks.invoiceId!;
    const payment = orderToPayment(order, this.identity.store, this.clock.now())!;
    const recorded = await this.partner
      .recordPayment(invoiceId, payment, this.key(order, 'payment'))
      .catch((err: unknown) => this.paymentAlreadyTaken(err, invoiceId, order));
    run.invoice = recorded.invoice;
    run.payment = recorded.payment;
    run.marksToWrite[MARKS.payment] = String(recorded.payment.id);
    const how = [order.payment_method_title?.trim() || order.payment_method, payment.reference].filter(Boolean).join(', ');
    run.done.push(`payment of ${recorded.payment.amount} ${recorded.invoice.currency} recorded (${how})`);
    run.changes.push('paid');
  }

  /**
   * When the invoice's state refused the payment: the payment it has already, taken through its
   * payment page or recorded by a run whose mark was lost beyond the idempotency window.
   */
  private async paymentAlreadyTaken(err: unknown, invoiceId: number, order: WooOrder): Promise<PaymentResult> {
    if (!(err instanceof PartnerError && err.code === 'invalid_state')) throw err;
    const invoice = await this.partner.getInvoice(invoiceId);
    const ours = (p: Payment) => p.metadata.wc_order_id === String(order.id);
    const taken = invoice.payments?.find(ours) ?? invoice.payments?.find((p) => p.status === 'succeeded');
    if (!taken) throw new OrderRefused(`invoice ${label(invoice)} is ${invoice.status}: the order's payment cannot be recorded on it`);
    return { payment: taken, invoice };
  }

  /**
   * Credits the invoice with what the shop has refunded beyond what the payment shows refunded, in a
   * credit note that refunds it on the order's payment: a partial refund in the shop is a partial
   * credit and refund here, a full one voids the invoice (nothing paid, credits covering it), and a
   * retry credits nothing twice.
   */
  private async refund(run: Run, paymentId: number): Promise<void> {
    const { order } = run;
    const shopRefunded = refundedMinor(order);
    if (!run.payment || run.payment.id !== paymentId) {
      run.invoice = await this.partner.getInvoice(run.invoice?.id ?? run.marks.invoiceId!);
      run.payment = run.invoice.payments?.find((p) => p.id === paymentId) ?? null;
      if (!run.payment) throw new OrderRefused(`payment ${paymentId}, recorded for this order, is not on invoice ${label(run.invoice)}`);
    }
    const currency = run.invoice!.currency;
    const paidMinor = BigInt(toMinor(run.payment.amount, currency));
    const refundedHere = BigInt(toMinor(run.payment.amount_refunded, currency));
    const target = shopRefunded < paidMinor ? shopRefunded : paidMinor;
    if (target > refundedHere) {
      const amount = toMajor(Number(target - refundedHere), currency);
      const reason = order.refunds.find((r) => r.reason?.trim())?.reason?.trim();
      // The key names the refunded total reached, so each refund in the shop is one credit note here.
      const credited = await this.partner.creditInvoice(
        run.invoice!.id,
        {
          items: refundLines(run.invoice!, target - refundedHere, `Refund of order #${order.number}`),
          ...(reason ? { memo: reason.slice(0, MAX_MEMO) } : {}),
          refund: true,
          metadata: orderMetadata(this.identity.store, order),
        },
        this.key(order, `refund-${target}`),
      );
      run.invoice = credited.invoice;
      run.payment = credited.invoice.payments?.find((p) => p.id === paymentId) ?? run.payment;
      run.done.push(`refund of ${amount} ${currency} recorded in credit note ${credited.credit_note.number}`);
      run.changes.push('refunded');
    }
    run.marksToWrite[MARKS.refunded] = String(shopRefunded);
  }

  /** A cancelled or refunded order's invoice is voided once nothing is paid on it. */
  private async voidUnpaid(run: Run): Promise<void> {
    const { order } = run;
    const invoice = run.invoice ?? (await this.partner.getInvoice(run.marks.invoiceId!));
    if (invoice.status !== 'void') {
      if (invoice.amount_paid > 0) {
        throw new OrderRefused(
          `the order is ${order.status} but invoice ${label(invoice)} has ${invoice.amount_paid} ${invoice.currency} paid: refund the order in WooCommerce and the invoice follows`,
        );
      }
      run.invoice = await this.partner.voidInvoice(invoice.id, this.key(order, 'void'));
      run.done.push(`voided, the order is ${order.status}`);
      run.changes.push('voided');
    }
    run.marksToWrite[MARKS.voided] = 'yes';
  }

  /** Writes the run's marks in one save, then tells the shop owner what happened in one note. */
  private async record(run: Run): Promise<void> {
    if (Object.keys(run.marksToWrite).length) await this.store.mark(run.order.id, run.marksToWrite);
    if (run.done.length && run.invoice) await this.note(run.order, `Invoice ${label(run.invoice)}: ${run.done.join('; ')}.`);
  }

  /** A refusal is told to the shop owner once: again only when its reason changes. */
  private async noteRefusal(order: WooOrder, reason: string, log: Logger): Promise<void> {
    if (marksOf(order).refused === reason) return;
    try {
      await this.store.addNote(order.id, `Invoicing refused: ${reason}.`);
      await this.store.mark(order.id, { [MARKS.refused]: reason });
    } catch (err) {
      log.warn({ err }, 'refusal not noted on the order');
    }
  }

  /** The order note is a courtesy: the invoice and the marks are what count, so a failed note is only logged. */
  private async note(order: WooOrder, text: string): Promise<void> {
    try {
      await this.store.addNote(order.id, text);
    } catch (err) {
      this.logger.warn({ err, order_id: order.id }, 'order note not added');
    }
  }

  /**
   * Our tax rate for each shop rate the order uses (shop rate id → ours): one per store and shop rate
   * (and percentage), found again by its metadata, never one per order, and remembered by this bridge.
   */
  private async taxRateIds(order: WooOrder): Promise<Map<number, number>> {
    const ids = new Map<number, number>();
    for (const rate of shopRatesOf(order)) {
      let ours = this.taxRates.get(rate.key);
      if (ours === undefined) {
        const metadata = { wc_store: this.identity.store.url, wc_tax_rate: rate.key };
        ours = await this.partner.findOrCreateTaxRate(metadata, { display_name: rate.label, percentage: rate.percentage }, `woo-${this.identity.store.id}-tax-rate-${rate.key}`);
        this.taxRates.set(rate.key, ours);
      }
      ids.set(rate.id, ours);
    }
    return ids;
  }

  /** The reverse-charge rate (category AE, 0 %) the bridge keeps for B2B orders under reverse charge. */
  private async reverseChargeRate(): Promise<number> {
    let ours = this.taxRates.get(REVERSE_CHARGE_KEY);
    if (ours === undefined) {
      ours = await this.partner.findOrCreateTaxRate(
        { wc_store: this.identity.store.url, wc_tax_rate: REVERSE_CHARGE_KEY },
        { display_name: 'Reverse charge', percentage: 0, category: 'AE', exemption_reason: REVERSE_CHARGE_TEXT },
        `woo-${this.identity.store.id}-tax-rate-${REVERSE_CHARGE_KEY}`,
      );
      this.taxRates.set(REVERSE_CHARGE_KEY, ours);
    }
    return ours;
  }

  /**
   * A client found by e-mail keeps its fields (quick-charge does not change it), so one without a VAT
   * number is given the order's before its invoice is made: the invoice names the buyer who accounts
   * for the VAT. A client with one keeps its own, and its tax status is left alone (its later B2C
   * orders keep their VAT).
   */
  private async giveVatNumber(email: string, vatNumber: string): Promise<void> {
    const found = await this.partner.findClientByEmail(email);
    if (found && !found.tax_id) await this.partner.updateClient(found.id, { tax_id: vatNumber });
  }

  private key(order: WooOrder, step: string): string {
    return `woo-${this.identity.store.id}-order-${order.id}-${step}`;
  }
}

function upToDate(order: WooOrder, invoiceId: number | null): Outcome {
  return { action: 'skipped', reason: invoiceId ? `invoice ${invoiceId} is up to date` : `order is ${order.status}, with no invoice` };
}

function isPaid(order: WooOrder): boolean {
  return !Number.isNaN(gmtTime(order.date_paid_gmt));
}

function label(invoice: Pick<Invoice, 'id' | 'number'>): string {
  return invoice.number ?? `#${invoice.id}`;
}
