/**
 * `invoicing trigger <event-type>`: each event type made to happen in test mode through the services
 * the API uses, creating the client, invoice, payment or contract it needs, so the event is a real
 * one: written by its change's transaction and delivered like any other.
 */
import { randomUUID } from 'node:crypto';
import { SystemActor } from '../server/auth/actor';
import { EventType } from '../server/events/model';
import { InvoiceDetail } from '../server/invoices/schema';
import { Services } from '../server/services';
import { todayUtc } from '../server/clock';
import { addDays } from '../server/validation';

export interface Trigger {
  /** What it creates and does, for `--list`. */
  does: string;
  /** Returns one line per record made, for the person who ran it. */
  fire(services: Services, actor: SystemActor): Promise<string[]>;
}

const SIGNER = { ipAddress: null, userAgent: 'invoicing trigger' };

async function aClient(services: Services, actor: SystemActor) {
  const suffix = randomUUID().slice(0, 8);
  return services.clients.create(actor, { name: `Trigger client ${suffix}`, email: `trigger.${suffix}@example.com` });
}

/** Marks the sample tax rate that triggered invoices carry, so it is made once per business and mode. */
const SAMPLE_RATE = { invoicing_trigger: 'sample_rate' };

/** The sample 20 % rate: a triggered invoice carries its tax breakdown, as a real one would. */
async function aSampleTaxRate(services: Services, actor: SystemActor): Promise<number> {
  const [found] = (await services.taxRates.list(actor, { page: 1, per_page: 1, active: true, metadata: SAMPLE_RATE })).data;
  return found?.id ?? (await services.taxRates.create(actor, { display_name: 'Sample VAT', percentage: 20, metadata: SAMPLE_RATE })).id;
}

async function aDraft(services: Services, actor: SystemActor, dates: { issue_date?: string; due_date?: string } = {}): Promise<InvoiceDetail> {
  const client = await aClient(services, actor);
  return services.invoices.create(actor, {
    ...dates,
    client_id: client.id,
    default_tax_rate_ids: [await aSampleTaxRate(services, actor)],
    items: [
      { description: 'Consulting', quantity: 2, unit_price: 60 },
      { description: 'Hosting', quantity: 1, unit_price: 25 },
    ],
  });
}

async function aSentInvoice(services: Services, actor: SystemActor): Promise<InvoiceDetail> {
  const draft = await aDraft(services, actor);
  return (await services.invoices.send(actor, draft.id)).invoice;
}

/** A sent invoice issued 31 days ago (by the business's clock) and due yesterday: overdue now. */
async function anOverdueInvoice(services: Services, actor: SystemActor): Promise<InvoiceDetail> {
  const today = todayUtc();
  const draft = await aDraft(services, actor, { issue_date: addDays(today, -31), due_date: addDays(today, -1) });
  return (await services.invoices.send(actor, draft.id)).invoice;
}

async function aPaidInvoice(services: Services, actor: SystemActor) {
  const sent = await aSentInvoice(services, actor);
  return services.paymentPath.simulate(actor, sent.id);
}

const made = (what: string, id: number) => `${what} ${id}`;

export const TRIGGERS: Record<EventType, Trigger> = {
  'invoice.created': {
    does: 'creates a client and a draft invoice',
    fire: async (services, actor) => [made('invoice', (await aDraft(services, actor)).id)],
  },
  'invoice.sent': {
    does: 'creates a client and an invoice, and sends it (the e-mail goes to example.com)',
    fire: async (services, actor) => [made('invoice', (await aSentInvoice(services, actor)).id)],
  },
  'invoice.viewed': {
    does: 'creates and sends an invoice, then opens its payment page as the client would',
    fire: async (services, actor) => {
      const sent = await aSentInvoice(services, actor);
      const { payment_url } = await services.invoices.initiatePayment(actor, sent.id);
      await services.invoices.openPaymentPage(payment_url.split('/').pop()!, { markViewed: true });
      return [made('invoice', sent.id)];
    },
  },
  'invoice.overdue': {
    does: 'creates and sends an invoice issued 31 days ago and due yesterday, then fires its invoice.overdue as the overdue sweep would (once: the sweep will not fire it again)',
    fire: async (services, actor) => {
      const sent = await anOverdueInvoice(services, actor);
      await services.overdue.notify(actor, sent.id, await services.clocks.of(actor));
      return [made('invoice', sent.id)];
    },
  },
  'invoice.reminder_sent': {
    does: 'creates and sends an invoice issued 31 days ago and due yesterday, then sends its payment reminder of 1 day after the due date as the reminder sweep would (test mode: no e-mail; it shows in reminders_sent)',
    fire: async (services, actor) => {
      const sent = await anOverdueInvoice(services, actor);
      await services.reminders.remind(actor, sent.id, 1);
      return [made('invoice', sent.id)];
    },
  },
  'payment.received': {
    does: 'creates and sends an invoice, then records a simulated payment of 50.00 of its 145.00',
    fire: async (services, actor) => {
      const sent = await aSentInvoice(services, actor);
      const { payment } = await services.paymentPath.simulate(actor, sent.id, 50);
      return [made('invoice', sent.id), made('payment', payment.id)];
    },
  },
  'invoice.paid': {
    does: 'creates and sends an invoice, then pays it in full with a simulated payment (payment.received fires too)',
    fire: async (services, actor) => {
      const { payment, invoice } = await aPaidInvoice(services, actor);
      return [made('invoice', invoice.id), made('payment', payment.id)];
    },
  },
  'payment.failed': {
    does: 'creates and sends an invoice, then reports a failed payment attempt on it',
    fire: async (services, actor) => {
      const sent = await aSentInvoice(services, actor);
      await services.paymentPath.simulateFailure(actor, sent.id);
      return [made('invoice', sent.id)];
    },
  },
  'payment.refunded': {
    does: 'pays an invoice with a simulated payment, then refunds it in full (invoice.paid fires too)',
    fire: async (services, actor) => {
      const { payment, invoice } = await aPaidInvoice(services, actor);
      const { refund } = await services.refunds.refund(actor, payment.id, {});
      return [made('invoice', invoice.id), made('payment', payment.id), made('refund', refund.id)];
    },
  },
  'payment.refund_failed': {
    does: 'pays an invoice with a simulated payment, refunds it in full, then the bank fails the refund: the invoice is paid again (payment.refunded fires too)',
    fire: async (services, actor) => {
      const { payment, invoice } = await aPaidInvoice(services, actor);
      const { refund } = await services.refunds.refund(actor, payment.id, {});
      await services.refunds.simulateBankFailure(actor, refund.id);
      return [made('invoice', invoice.id), made('payment', payment.id), made('refund', refund.id)];
    },
  },
  'credit_note.created': {
    does: 'pays an invoice with a simulated payment, then credits its first line with a credit note that refunds it (invoice.paid and payment.refunded fire too)',
    fire: async (services, actor) => {
      const { payment, invoice } = await aPaidInvoice(services, actor);
      const { credit_note } = await services.creditNotes.create(actor, invoice.id, { items: [{ invoice_item_id: invoice.items[0].id }], reason: 'product_unsatisfactory', refund: true });
      return [made('invoice', invoice.id), made('payment', payment.id), made('credit note', credit_note.id)];
    },
  },
  'contract.signed': {
    does: 'creates a client and a contract; the client signs it at its link, then the business countersigns',
    fire: async (services, actor) => {
      const client = await aClient(services, actor);
      const contract = await services.contracts.create(actor, { type: 'contract', title: 'Trigger contract', client_id: client.id, body: 'Terms of a test-mode contract.' });
      const token = new URL(contract.signing_url).pathname.split('/')[2];
      await services.contracts.signThroughLink(token, { name: client.name, ...SIGNER });
      await services.contracts.countersign(actor, contract.id, { name: 'Trigger', ...SIGNER });
      return [made('contract', contract.id)];
    },
  },
};
