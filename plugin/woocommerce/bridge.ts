/**
 * One order → at most one sent invoice. The order's meta (`_invoicing_invoice_id`) is the mark of a
 * finished order; until it is written, every step is repeatable: the invoice is created under an
 * Idempotency-Key derived from store and order, and an invoice already carrying the order's marker is
 * reused, so a retry days later still finds it. Work on one order runs one at a time in a process.
 */
import { createHash } from 'node:crypto';
import pLimit from 'p-limit';
import { Logger } from 'pino';
import { toMajor, toMinor } from '../../server/money/amount';
import { currencyExponent } from '../../server/money/currencies';
import { orderMarker, OrderRefused, orderToInvoice, parseMoney } from './mapping';
import { invoiceIdOf, WooOrder } from './order';
import { Invoice, PartnerApi, PartnerError } from './partner';
import { WooStore } from './store';

export type Outcome =
  | { action: 'invoiced'; invoice_id: number; number: string | null }
  | { action: 'voided'; invoice_id: number }
  | { action: 'skipped'; reason: string }
  | { action: 'refused'; reason: string };

/** API answers that no retry changes: the bridge's request itself is refused. */
const PERMANENT = [400, 404, 422];

/** Statuses after which an unpaid invoice is voided. */
const CANCELLED = ['cancelled', 'refunded'];

/** Orders worked on at once: a burst of deliveries would otherwise meet the API's per-key rate limit all together. */
export const ORDER_CONCURRENCY = 4;

export class OrderBridge {
  private readonly running = new Map<number, Promise<Outcome>>();
  private readonly slots = pLimit(ORDER_CONCURRENCY);

  constructor(
    private readonly store: WooStore,
    private readonly partner: PartnerApi,
    /** Identifies the store in idempotency keys and invoice markers (a hash of its URL). */
    private readonly storeId: string,
    private readonly logger: Logger,
  ) {}

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

  private async process(orderId: number): Promise<Outcome> {
    const log = this.logger.child({ order_id: orderId });
    let outcome: Outcome;
    try {
      outcome = await this.reconcile(await this.store.order(orderId), log);
    } catch (err) {
      if (!(err instanceof PartnerError && PERMANENT.includes(err.status))) {
        log.error({ err }, 'order processing failed; the next poll tries again');
        throw err;
      }
      // The API refused the request itself (a field it does not accept): retrying cannot change that.
      outcome = { action: 'refused', reason: err.message };
    }
    if (outcome.action === 'refused') log.warn({ reason: outcome.reason }, 'order not invoiced');
    else if (outcome.action !== 'skipped') log.info(outcome, `order ${outcome.action}`);
    return outcome;
  }

  private async reconcile(order: WooOrder, log: Logger): Promise<Outcome> {
    const invoiceId = invoiceIdOf(order);
    if (CANCELLED.includes(order.status) || this.fullyRefunded(order)) {
      // Without the mark, an earlier run may still have made an invoice before it stopped.
      const invoice = invoiceId ?? (await this.unmarkedInvoice(order))?.id;
      return invoice ? this.voidUnpaid(order, invoice, log) : { action: 'skipped', reason: `order is ${order.status}, with no invoice` };
    }
    if (order.status !== 'completed') return { action: 'skipped', reason: `order is ${order.status}` };
    // The mark is written last: an order that has it is done, whatever fired this call (our own note included).
    if (invoiceId) return { action: 'skipped', reason: `already invoiced as ${invoiceId}` };

    let draft;
    try {
      draft = orderToInvoice(order, this.storeId);
    } catch (err) {
      if (err instanceof OrderRefused) return { action: 'refused', reason: err.reason };
      throw err;
    }
    const client = await this.clientFor(draft.client);
    // A client created just now has no invoices to look through.
    const earlier = client.created ? null : await this.existingInvoice(order, client.id);
    if (earlier && toMinor(earlier.total, draft.currency) !== draft.totalMinor) {
      return { action: 'refused', reason: `invoice ${earlier.id}, made for this order earlier, totals ${earlier.total} but the order now totals ${toMajor(draft.totalMinor, draft.currency)}: void it to invoice the order again` };
    }
    let invoice: Invoice;
    try {
      invoice = earlier ?? (await this.partner.createInvoice(
        { client_id: client.id, currency: draft.currency, ...(draft.issue_date ? { issue_date: draft.issue_date } : {}), items: draft.items, notes: draft.notes },
        this.key(order, 'invoice'),
      ));
    } catch (err) {
      if (err instanceof PartnerError && err.code === 'idempotency_key_reused') {
        return { action: 'refused', reason: 'the order changed (another client or other items) after an invoice was made for it in the last 24 hours' };
      }
      throw err;
    }
    const sent = invoice.status === 'draft' ? await this.partner.sendInvoice(invoice.id, this.key(order, 'send')) : invoice;
    await this.store.markInvoiced(order.id, sent.id);
    await this.note(order, `Invoice ${sent.number ?? sent.id} sent to ${draft.client.email}.`, log);
    return { action: 'invoiced', invoice_id: sent.id, number: sent.number };
  }

  /** An invoice made by an earlier run whose mark never reached the order (beyond the idempotency window too). */
  private existingInvoice(order: WooOrder, clientId: number): Promise<Invoice | null> {
    const marker = orderMarker(this.storeId, order);
    return this.partner.findInvoice(clientId, (invoice) => invoice.status !== 'void' && (invoice.notes ?? '').includes(marker));
  }

  /** The invoice of an order that lost its mark, found through the buyer's e-mail. */
  private async unmarkedInvoice(order: WooOrder): Promise<Invoice | null> {
    const email = order.billing?.email?.trim();
    const client = email ? await this.partner.findClientByEmail(email) : null;
    return client ? this.existingInvoice(order, client.id) : null;
  }

  /** The order note is a courtesy: the invoice and the mark are what count, so a failed note is only logged. */
  private async note(order: WooOrder, text: string, log: Logger): Promise<void> {
    try {
      await this.store.addNote(order.id, text);
    } catch (err) {
      log.warn({ err }, 'order note not added');
    }
  }

  private async clientFor(input: { email: string }): Promise<{ id: number; created: boolean }> {
    const found = await this.partner.findClientByEmail(input.email);
    if (found) return { id: found.id, created: false };
    try {
      const created = await this.partner.createClient(input, `woo-${this.storeId}-client-${sha256(input.email.toLowerCase()).slice(0, 32)}`);
      return { id: created.id, created: true };
    } catch (err) {
      // Another order of the same buyer created the client a moment ago (its e-mail is unique).
      // Or one with another spelling of the e-mail, under the same idempotency key.
      const raced =
        err instanceof PartnerError && (err.code === 'idempotency_key_reused' || (err.body as { errors?: Record<string, unknown> })?.errors?.email);
      const again = raced ? await this.partner.findClientByEmail(input.email) : null;
      if (again) return { id: again.id, created: false };
      throw err;
    }
  }

  /** Refunds (negative amounts, "-12.50") that add up to the whole order total, compared in minor units. */
  private fullyRefunded(order: WooOrder): boolean {
    const exponent = currencyExponent(String(order.currency).toUpperCase());
    if (!order.refunds?.length || exponent === undefined) return false;
    const minor = (value: string) => {
      const amount = parseMoney(value, exponent, 'refund');
      return amount < 0n ? -amount : amount;
    };
    return order.refunds.reduce((sum, r) => sum + minor(r.total), 0n) >= minor(order.total);
  }

  private async voidUnpaid(order: WooOrder, invoiceId: number, log: Logger): Promise<Outcome> {
    const invoice = await this.partner.getInvoice(invoiceId);
    if (invoice.status === 'void') return { action: 'skipped', reason: 'invoice already void' };
    if (invoice.amount_paid > 0) return { action: 'refused', reason: `invoice ${invoiceId} has payments; it is not voided` };
    await this.partner.voidInvoice(invoiceId, this.key(order, 'void'));
    await this.note(order, `Invoice ${invoice.number ?? invoiceId} voided: the order is ${order.status}.`, log);
    return { action: 'voided', invoice_id: invoiceId };
  }

  private key(order: WooOrder, step: string): string {
    return `woo-${this.storeId}-order-${order.id}-${step}`;
  }
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
