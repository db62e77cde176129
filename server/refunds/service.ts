/**
 * Refunds, all through here: one asked for through the API, one made in a gateway's own dashboard,
 * and the excess of a gateway payment that took more than was due. A payment's `amount_refunded`
 * is reserved under the invoice's and the payment's row locks before a gateway is asked (outside
 * any transaction), so two refunds can never return more than was paid; a refusal releases it.
 */
import Joi from 'joi';
import { Knex } from 'knex';
import { Logger } from 'pino';
import { Actor } from '../auth/actor';
import { Database } from '../db/database';
import { GatewayError, InvalidState, NotFound, ValidationFailed } from '../errors';
import { Outbox } from '../events/outbox';
import { GatewayUnavailable } from '../gateways/gateway';
import { GatewayClients } from '../gateways/clients';
import { invoiceDetail } from '../invoices/detail';
import { InvoiceLinks } from '../invoices/links';
import { Invoice } from '../invoices/model';
import { InvoiceDetail } from '../invoices/view';
import { Metadata, MetadataChanges, metadataField } from '../metadata/schema';
import { initialMetadata } from '../metadata/store';
import { collectMinor, moneyField, toMajor } from '../money/amount';
import { Payment } from '../payments/model';
import { PaymentView, toPaymentView } from '../payments/view';
import { Refund } from './model';
import { RefundView, toRefundView } from './view';

export interface RefundInput {
  amount?: number;
  reason?: string | null;
  metadata?: MetadataChanges;
}

export const refundBody = Joi.object<RefundInput>({
  amount: moneyField.greater(0).description('Major units; default: what is left of the payment'),
  reason: Joi.string().trim().max(500).allow(null, '').description('Why; `duplicate`, `fraudulent` and `requested_by_customer` are passed to Stripe as its reason'),
  metadata: metadataField,
});

export interface RefundResult {
  refund: RefundView;
  payment: PaymentView;
  invoice: InvoiceDetail;
}

/** Gateways whose payments are refunded at the gateway; others (`external`, `test`) are recorded only. */
const ONLINE_GATEWAYS = ['stripe'];

/** What a refund changes, decided under the row locks. */
interface Planned {
  minor: number;
  reason: string | null;
  metadata: Metadata;
}

export class RefundService {
  constructor(
    private readonly db: Database,
    private readonly outbox: Outbox,
    private readonly gateways: GatewayClients,
    private readonly logger: Logger,
    private readonly links: InvoiceLinks,
  ) {}

  /**
   * `POST /payments/{id}/refund`: all or part of what is left of a succeeded payment. `requestKey`
   * (the request's Idempotency-Key): a refund already made under it is answered again, and one left
   * pending by a process that died is resumed, so a retry never refunds twice.
   */
  refund(actor: Actor, paymentId: number, input: RefundInput, requestKey?: string): Promise<RefundResult> {
    return this.perform(actor, paymentId, requestKey ?? null, (payment, left) => {
      if (left <= 0) throw new InvalidState('This payment is already fully refunded');
      const errors = new Map<string, string[]>();
      const minor = input.amount === undefined ? left : collectMinor(errors, 'amount', input.amount, payment.currency);
      if (minor > left) errors.set('amount', [`must not exceed what is left of the payment (${toMajor(left, payment.currency)} ${payment.currency})`]);
      if (errors.size) throw new ValidationFailed(Object.fromEntries(errors));
      return { minor, reason: input.reason || null, metadata: initialMetadata(input.metadata) };
    });
  }

  /** The part of a gateway payment beyond what was due (an overpayment, or a paid or void invoice), returned at once. */
  refundExcess(actor: Actor, paymentId: number, excess: number): Promise<RefundResult> {
    return this.perform(actor, paymentId, null, (_payment, left) => ({
      minor: Math.min(excess, left),
      reason: 'Overpayment: more than was due on the invoice',
      metadata: {},
    }));
  }

  /**
   * A gateway reports that `amountRefunded` (in all) has been returned on one of its payments: what
   * this service has not recorded yet (a refund made in the gateway's dashboard) is recorded now.
   * Repeated or out-of-order notifications change nothing, as the total only grows.
   */
  async recordGatewayRefund(actor: Actor, gateway: string, paymentReference: string, amountRefunded: number, refundReference: string | null): Promise<RefundResult | null> {
    return this.db.transaction(async (trx) => {
      const found = await Payment.of(actor, trx).findOne({ gateway, unique_reference: paymentReference });
      if (!found) return null;
      const { invoice, payment } = await this.lockBoth(trx, actor, found);
      const unrecorded = Math.min(amountRefunded, payment.amount) - payment.amount_refunded;
      if (unrecorded <= 0) return null;
      const refund = await this.insert(trx, actor, payment, { minor: unrecorded, reason: 'Refunded at the payment gateway', metadata: {} }, { status: 'succeeded', reference: refundReference });
      return this.settle(trx, actor, invoice, payment, refund);
    });
  }

  /**
   * Decides the refund under the invoice's and the payment's locks. A recorded payment is refunded
   * in that one transaction; a gateway's is reserved, asked for at the gateway, then settled (or
   * released when the gateway refuses).
   */
  private async perform(actor: Actor, paymentId: number, requestKey: string | null, plan: (payment: Payment, left: number) => Planned): Promise<RefundResult> {
    const reserved = await this.db.transaction(async (trx) => {
      const found = await Payment.of(actor, trx).findById(paymentId);
      if (!found) throw new NotFound('Payment');
      const { invoice, payment } = await this.lockBoth(trx, actor, found);
      const earlier = requestKey ? await Refund.of(actor, trx).findOne({ request_key: requestKey, payment_id: paymentId }) : undefined;
      if (earlier?.status === 'succeeded') return { done: await this.resultOf(trx, actor, invoice, payment, earlier) };
      if (earlier) return { pending: { refund: earlier, payment } };
      if (payment.status !== 'succeeded') throw new InvalidState(`A ${payment.status} payment cannot be refunded`);
      const planned = plan(payment, payment.amount - payment.amount_refunded);
      if (!ONLINE_GATEWAYS.includes(payment.gateway ?? '')) {
        const refund = await this.insert(trx, actor, payment, planned, { status: 'succeeded', requestKey });
        return { done: await this.settle(trx, actor, invoice, payment, refund) };
      }
      const refund = await this.insert(trx, actor, payment, planned, { status: 'pending', requestKey });
      await payment.$query(trx).patch({ amount_refunded: payment.amount_refunded + planned.minor });
      return { pending: { refund, payment } };
    });
    if (reserved.done) return reserved.done;
    const { refund, payment } = reserved.pending;

    let refundReference: string;
    try {
      const gateway = await this.gateways.of(actor.businessId);
      ({ refundReference } = await gateway.refund({
        paymentReference: payment.gateway_reference ?? '',
        amount: refund.amount,
        reason: refund.reason,
        idempotencyKey: `refund-${refund.business_id}-${refund.id}`,
      }));
    } catch (err) {
      await this.release(actor, refund, err);
      if (err instanceof GatewayUnavailable || err instanceof NotFound) throw new GatewayError(`The refund was not made: ${err.message}`);
      throw err;
    }
    return this.db.transaction(async (trx) => {
      const { invoice, payment: locked } = await this.lockBoth(trx, actor, payment);
      await refund.$query(trx).patch({ status: 'succeeded', gateway_reference: refundReference, unique_reference: refundReference });
      // The reservation already counted this refund in `amount_refunded`.
      return this.settle(trx, actor, invoice, locked, refund, { reserved: true });
    });
  }

  /** The gateway refused: nothing was returned, so the reservation goes and the refund is failed. */
  private async release(actor: Actor, refund: Refund, err: unknown): Promise<void> {
    this.logger.warn({ err, businessId: actor.businessId, refundId: refund.id }, 'the gateway did not make a refund; its reservation is released');
    await this.db.transaction(async (trx) => {
      const payment = await Payment.of(actor, trx).findById(refund.payment_id).forUpdate();
      if (payment) await payment.$query(trx).patch({ amount_refunded: payment.amount_refunded - refund.amount });
      // The request's key is freed: a retry of the refused request may try again.
      await refund.$query(trx).patch({ status: 'failed', failure_reason: err instanceof Error ? err.message.slice(0, 500) : 'refused', request_key: null });
    });
  }

  /** The invoice's row, then the payment's: the order every payment change takes (see PaymentService.record). */
  private async lockBoth(trx: Knex.Transaction, actor: Actor, payment: Payment): Promise<{ invoice: Invoice; payment: Payment }> {
    const invoice = await Invoice.of(actor, trx).findById(payment.invoice_id).forUpdate();
    const locked = await Payment.of(actor, trx).findById(payment.id).forUpdate();
    if (!invoice || !locked) throw new NotFound('Payment');
    return { invoice, payment: locked };
  }

  private async insert(
    trx: Knex.Transaction,
    actor: Actor,
    payment: Payment,
    planned: Planned,
    { status, reference = null, requestKey = null }: { status: Refund['status']; reference?: string | null; requestKey?: string | null },
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
      metadata: planned.metadata,
    });
  }

  /**
   * Books a succeeded refund: the payment's refunded total and status, the invoice's `amount_paid`
   * (only by what the payment had counted towards it: the part it never counted, an overpayment,
   * is returned first), the invoice's status, and `payment.refunded`.
   */
  private async settle(
    trx: Knex.Transaction,
    actor: Actor,
    invoice: Invoice,
    payment: Payment,
    refund: Refund,
    { reserved = false } = {},
  ): Promise<RefundResult> {
    const refundedBefore = reserved ? payment.amount_refunded - refund.amount : payment.amount_refunded;
    const refundedAfter = refundedBefore + refund.amount;
    const uncounted = payment.amount - (payment.amount_applied ?? payment.amount);
    const uncountedLeft = Math.max(0, uncounted - refundedBefore);
    const fromInvoice = Math.min(invoice.amount_paid, Math.max(0, refund.amount - uncountedLeft));
    await payment.$query(trx).patch({ amount_refunded: refundedAfter, status: refundedAfter >= payment.amount ? 'refunded' : 'succeeded' });
    if (fromInvoice > 0) {
      const amountPaid = invoice.amount_paid - fromInvoice;
      const reopened = invoice.status === 'paid' || invoice.status === 'partial';
      await invoice.$query(trx).patch({
        amount_paid: amountPaid,
        ...(reopened ? { status: amountPaid > 0 ? ('partial' as const) : ('sent' as const), paid_at: null } : {}),
      });
    }
    const result = await this.resultOf(trx, actor, invoice, payment, refund);
    await this.outbox.record(trx, actor, 'payment.refunded', { ...result });
    return result;
  }

  private async resultOf(trx: Knex.Transaction, actor: Actor, invoice: Invoice, payment: Payment, refund: Refund): Promise<RefundResult> {
    return { refund: toRefundView(refund), payment: toPaymentView(payment), invoice: await invoiceDetail(actor, invoice, trx, this.links) };
  }
}
