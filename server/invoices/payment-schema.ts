/**
 * A payment as responses show it. Payments are recorded by server/payments/, but an invoice shows
 * its payments, so their shape sits here, below both (as their row and mapper do).
 */
import { Static, Type } from '@sinclair/typebox';
import { MetadataShape } from '../metadata/schema';
import { closed, Currency, dateTime, Id, money } from '../shapes/common';
import { component, nullable, stringEnum } from '../shapes/component';
import { PAYMENT_STATUSES } from './payment-model';

export const PaymentStatusShape = component('PaymentStatus', stringEnum(PAYMENT_STATUSES));

export const PaymentShape = component(
  'Payment',
  closed({
    id: Id,
    invoice_id: Id,
    client_id: Id,
    amount: money(),
    amount_refunded: money({ minimum: 0, description: 'Refunded so far; the status is `refunded` once it equals `amount`' }),
    currency: Currency,
    status: PaymentStatusShape,
    method: Type.String({ description: '`simulated` (test mode), `card` (a gateway), or for a payment received elsewhere `bank_transfer`, `cash`, `card`, `check`, `other`' }),
    gateway: nullable(Type.String(), { description: '`test`, `stripe`, or `external` (received elsewhere)' }),
    gateway_reference: nullable(Type.String()),
    metadata: MetadataShape,
    livemode: Type.Boolean(),
    paid_at: nullable(dateTime),
    created_at: dateTime,
  }),
);
export type PaymentView = Static<typeof PaymentShape>;
