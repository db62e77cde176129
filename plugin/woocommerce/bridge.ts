/**
 * One order → at most one sent invoice. The order's meta (`_invoicing_invoice_id`) is the mark of a
 * finished order; until it is written, every step is repeatable: the invoice is created under an
 * Idempotency-Key derived from store and order, and an invoice already carrying the order's marker is
 * reused, so a retry days later still finds it. Work on one order runs one at a time in a process.
 */
import { createHash } from 'node:crypto';
import { Logger } from 'pino';
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

/** Statuses after which an unpaid invoice is voided. */
const CANCELLED = ['cancelled', 'refunded'];

export class OrderBridge {
  private readonly running = new Map<number, Promise<Outcome>>();

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
    const next = previous.catch(() => undefined).then(() => this.process(orderId));
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
    try {
      const order = await this.store.order(orderId);
      const outcome = await this.reconcile(order);
      if (outcome.action === 'refused') log.warn({ reason: outcome.reason }, 'order not invoiced');
      else if (outcome.action !== 'skipped') log.info(outcome, `order ${outcome.action}`);
      return outcome;
    } catch (err) {
      log.error({ err }, 'order processing failed; the next poll tries again');
      throw err;
    }
  }

  private async reconcile(order: WooOrder): Promise<Outcome> {
    const invoiceId = invoiceIdOf(order);
    if (CANCELLED.includes(order.status) || this.fullyRefunded(order)) {
      return invoiceId ? this.voidUnpaid(order, invoiceId) : { action: 'skipped', reason: `order is ${order.status}, with no invoice` };
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
    const invoice = earlier ?? (await this.partner.createInvoice(
      { client_id: client.id, currency: draft.currency, ...(draft.issue_date ? { issue_date: draft.issue_date } : {}), items: draft.items, notes: draft.notes },
      this.key(order, 'invoice'),
    ));
    const sent = invoice.status === 'draft' ? await this.partner.sendInvoice(invoice.id, this.key(order, 'send')) : invoice;
    await this.store.markInvoiced(order.id, sent.id);
    await this.store.addNote(order.id, `Invoice ${sent.number ?? sent.id} sent to ${draft.client.email}.`);
    return { action: 'invoiced', invoice_id: sent.id, number: sent.number };
  }

  /** An invoice made by an earlier run whose mark never reached the order (beyond the idempotency window too). */
  private async existingInvoice(order: WooOrder, clientId: number): Promise<Invoice | null> {
    const marker = orderMarker(this.storeId, order);
    const { data } = await this.partner.invoicesOf(clientId);
    return data.find((invoice) => invoice.status !== 'void' && (invoice.notes ?? '').includes(marker)) ?? null;
  }

  private async clientFor(input: { email: string }): Promise<{ id: number; created: boolean }> {
    const found = await this.partner.findClientByEmail(input.email);
    if (found) return { id: found.id, created: false };
    try {
      const created = await this.partner.createClient(input, `woo-${this.storeId}-client-${sha256(input.email.toLowerCase()).slice(0, 32)}`);
      return { id: created.id, created: true };
    } catch (err) {
      // Another order of the same buyer created the client a moment ago (its e-mail is unique).
      const raced = err instanceof PartnerError && err.status === 422 && (err.body as { errors?: Record<string, unknown> })?.errors?.email;
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

  private async voidUnpaid(order: WooOrder, invoiceId: number): Promise<Outcome> {
    const invoice = await this.partner.getInvoice(invoiceId);
    if (invoice.status === 'void') return { action: 'skipped', reason: 'invoice already void' };
    if (invoice.amount_paid > 0) return { action: 'refused', reason: `invoice ${invoiceId} has payments; it is not voided` };
    await this.partner.voidInvoice(invoiceId, this.key(order, 'void'));
    await this.store.addNote(order.id, `Invoice ${invoice.number ?? invoiceId} voided: the order is ${order.status}.`);
    return { action: 'voided', invoice_id: invoiceId };
  }

  private key(order: WooOrder, step: string): string {
    return `woo-${this.storeId}-order-${order.id}-${step}`;
  }
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
