/**
 * The query of `GET /events`, and the events as it and the webhook deliveries carry them. The
 * payloads hold the features' records (an invoice, a payment, a refund, a contract) as they were
 * when the event happened; events/ sits below those features, so a payload names their shapes by
 * component name, and the event log is written back as stored.
 */
import { Static, TSchema, Type } from '@sinclair/typebox';
import Joi from 'joi';
import { listQuery, ListParams } from '../http/pagination';
import { closed, dateTime, Id, listOf } from '../shapes/common';
import { component, stringEnum, writtenAsStored } from '../shapes/component';
import { EVENT_TYPES, EventType } from './model';
import { MAX_WAITS_PER_CREDENTIAL } from './watch';

/** The longest a `GET /events?wait=` holds the request open, in seconds. */
export const MAX_EVENT_WAIT_SECONDS = 30;

export interface EventListParams extends ListParams {
  type?: EventType;
  wait: number;
}

export const listEventsQuery = listQuery<EventListParams>({
  type: Joi.string()
    .valid(...EVENT_TYPES)
    .description('Only events of this type'),
  wait: Joi.number()
    .integer()
    .min(0)
    .max(MAX_EVENT_WAIT_SECONDS)
    .default(0)
    .description(
      `Long polling: when no event matches yet, hold the request up to this many seconds (at most ${MAX_EVENT_WAIT_SECONDS}) and answer as soon as one is committed; 0 (the default) answers at once, as does a poll of a credential that has ${MAX_WAITS_PER_CREDENTIAL} waiting already`,
    ),
});

export const EventTypeShape = component('EventType', stringEnum(EVENT_TYPES));

/** What every event carries around its `data`. */
const EventEnvelopeShape = component(
  'EventEnvelope',
  Type.Object({
    id: Id,
    type: EventTypeShape,
    created_at: dateTime,
    livemode: Type.Boolean(),
    business_id: Id,
    idempotency_key: Type.String({ format: 'uuid', description: 'The same on every retry of one event: deduplicate on it' }),
    data: Type.Unsafe<Record<string, unknown>>({ type: 'object' }),
  }),
);
/** What a receiver gets: the contract's payload. */
export type EventPayload = Static<typeof EventEnvelopeShape>;

/** A feature's shape, by its component name (see above). */
const shapeNamed = (name: string) => Type.Unsafe<Record<string, unknown>>({ $ref: `#/components/schemas/${name}` });

/** The event `name`: the envelope, with the type(s) and the data it carries. */
const eventOf = (name: string, type: TSchema, data: Record<string, TSchema>) =>
  component(name, Type.Unsafe<EventPayload>({ type: 'object', allOf: [EventEnvelopeShape], properties: { type, data: closed(data) }, unevaluatedProperties: false }));

const EventShape = component(
  'Event',
  Type.Unsafe<EventPayload>({
    description: 'An event as its webhook deliveries carry it',
    oneOf: [
      eventOf('InvoiceEvent', stringEnum(EVENT_TYPES.filter((type) => type.startsWith('invoice.') && type !== 'invoice.reminder_sent')), { invoice: shapeNamed('InvoiceDetail') }),
      eventOf('InvoiceReminderSentEvent', Type.Literal('invoice.reminder_sent'), { invoice: shapeNamed('InvoiceDetail'), reminder: shapeNamed('ReminderSent') }),
      eventOf('PaymentReceivedEvent', Type.Literal('payment.received'), { payment: shapeNamed('Payment'), invoice: shapeNamed('InvoiceDetail') }),
      eventOf('PaymentFailedEvent', Type.Literal('payment.failed'), { invoice: shapeNamed('InvoiceDetail'), reason: Type.String() }),
      eventOf('PaymentRefundedEvent', Type.Literal('payment.refunded'), { payment: shapeNamed('Payment'), invoice: shapeNamed('InvoiceDetail'), refund: shapeNamed('Refund') }),
      eventOf('PaymentRefundFailedEvent', Type.Literal('payment.refund_failed'), {
        payment: shapeNamed('Payment'),
        invoice: shapeNamed('InvoiceDetail'),
        refund: shapeNamed('Refund'),
      }),
      eventOf('ContractSignedEvent', Type.Literal('contract.signed'), { contract: shapeNamed('Contract') }),
      eventOf('CreditNoteCreatedEvent', Type.Literal('credit_note.created'), { credit_note: shapeNamed('CreditNote'), invoice: shapeNamed('InvoiceDetail') }),
    ],
  }),
);

export const EventList = writtenAsStored(listOf('EventList', EventShape));
