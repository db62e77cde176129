/**
 * Every operation of the OpenAPI document, called once through a client generated from it
 * (openapi-typescript's `paths`, openapi-fetch's `createClient<paths>()`). `tsc` checks these calls
 * against the generated types, so a path, parameter or field the document no longer has, or a body
 * the document would refuse, fails the check before anything runs. The calls run in an order that
 * makes each one succeed; check-every-operation.ts compares the statuses with the document.
 */
import type { Client } from 'openapi-fetch';
import type { paths } from './generated/openapi';

export type ApiClient = Client<paths>;

/** The data of a call that succeeded; the error body of one that did not, thrown. */
function succeeded<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data === undefined) {
    throw new Error(`${result.response.status} from ${result.response.url}: ${JSON.stringify(result.error)}`);
  }
  return result.data;
}

const metadata = { source: 'api-check' };
const anInvoice = (clientId: number) => ({
  client_id: clientId,
  currency: 'usd',
  due_date: '2099-12-31',
  items: [
    { description: 'Design', quantity: 2, unit_price: 50 },
    { description: 'Hosting', quantity: 1, unit_price: 30.5 },
  ],
  metadata,
});

export async function callEveryOperation(api: ApiClient): Promise<void> {
  succeeded(await api.GET('/'));
  succeeded(await api.GET('/docs', { parseAs: 'text' }));
  succeeded(await api.GET('/openapi.json'));
  succeeded(await api.GET('/ping'));
  succeeded(await api.GET('/business'));

  const { client } = succeeded(await api.POST('/clients', { body: { name: 'Ada Lovelace', email: 'ada@example.com', phone: '+44 20 0000 0000', metadata } }));
  const id = { path: { id: client.id } };
  succeeded(await api.GET('/clients', { params: { query: { per_page: 5, search: 'ada', metadata } } }));
  succeeded(await api.GET('/clients/{id}', { params: id }));
  succeeded(await api.PATCH('/clients/{id}', { params: id, body: { company: 'Analytical Engines Ltd', metadata: { source: null } } }));
  const { client: leaving } = succeeded(await api.POST('/clients', { body: { name: 'Charles Babbage', email: 'charles@example.com' } }));
  succeeded(await api.DELETE('/clients/{id}', { params: { path: { id: leaving.id } } }));

  const { tax_rate } = succeeded(await api.POST('/tax-rates', { body: { display_name: 'VAT', percentage: 19, country: 'de', metadata } }));
  const taxRateId = { path: { id: tax_rate.id } };
  succeeded(await api.GET('/tax-rates', { params: { query: { active: 'true', metadata } } }));
  succeeded(await api.GET('/tax-rates/{id}', { params: taxRateId }));
  succeeded(await api.PATCH('/tax-rates/{id}', { params: taxRateId, body: { description: 'Germany, standard rate' } }));

  const { invoice } = succeeded(
    await api.POST('/invoices', { body: { ...anInvoice(client.id), default_tax_rate_ids: [tax_rate.id] }, params: { header: { 'Idempotency-Key': 'api-check-invoice' } } }),
  );
  const invoiceId = { path: { id: invoice.id } };
  succeeded(await api.GET('/invoices', { params: { query: { status: 'draft', client_id: String(client.id), metadata } } }));
  succeeded(await api.GET('/invoices/{id}', { params: invoiceId }));
  succeeded(await api.PATCH('/invoices/{id}', { params: invoiceId, body: { notes: 'Thank you' } }));
  succeeded(await api.GET('/invoices/{id}/pdf', { params: invoiceId, parseAs: 'arrayBuffer' }));
  succeeded(await api.POST('/invoices/{id}/send', { params: invoiceId }));
  succeeded(await api.GET('/invoices/{id}/payment-status', { params: invoiceId }));
  succeeded(await api.POST('/invoices/{id}/initiate-payment', { params: invoiceId }));
  const simulated = succeeded(await api.POST('/invoices/{id}/simulate-payment', { params: invoiceId, body: { amount: 50 } }));
  succeeded(await api.POST('/invoices/{id}/payments', { params: invoiceId, body: { amount: 20, method: 'bank_transfer', reference: 'TRX-1', metadata } }));

  const { invoice: voided } = succeeded(await api.POST('/invoices', { body: anInvoice(client.id) }));
  succeeded(await api.POST('/invoices/{id}/void', { params: { path: { id: voided.id } } }));
  const { invoice: deleted } = succeeded(await api.POST('/invoices', { body: anInvoice(client.id) }));
  succeeded(await api.DELETE('/invoices/{id}', { params: { path: { id: deleted.id } } }));
  succeeded(await api.POST('/quick-charge', { body: { client: { name: 'Grace Hopper', email: 'grace@example.com' }, amount: 25, description: 'Consulting' } }));

  const paymentId = { path: { id: simulated.payment.id } };
  succeeded(await api.GET('/payments', { params: { query: { invoice_id: String(invoice.id), status: 'succeeded' } } }));
  succeeded(await api.GET('/payments/{id}', { params: paymentId }));
  succeeded(await api.PATCH('/payments/{id}', { params: paymentId, body: { metadata } }));
  const { refund } = succeeded(await api.POST('/payments/{id}/refund', { params: paymentId, body: { amount: 10, reason: 'Goodwill' } }));
  succeeded(await api.GET('/refunds', { params: { query: { payment_id: String(simulated.payment.id) } } }));
  succeeded(await api.GET('/refunds/{id}', { params: { path: { id: refund.id } } }));

  // The business has a legal identity (check-every-operation.ts): an issued invoice to a buyer with one is an e-invoice.
  const { client: buyer } = succeeded(
    await api.POST('/clients', { body: { name: 'Camille Martin', email: 'camille@example.com', city: 'Paris', country: 'FR', tax_id: 'FR40303265045', peppol_id: '9957:FR40303265045' } }),
  );
  const { invoice: einvoiced } = succeeded(
    await api.POST('/invoices', { body: { ...anInvoice(buyer.id), currency: 'eur', buyer_reference: 'PO-1', default_tax_rate_ids: [tax_rate.id] } }),
  );
  succeeded(await api.POST('/invoices/{id}/initiate-payment', { params: { path: { id: einvoiced.id } } }));
  const ubl = succeeded(await api.GET('/invoices/{id}/einvoice', { params: { path: { id: einvoiced.id }, query: { format: 'ubl' } }, parseAs: 'text' }));
  // The business receives its own invoice: imported as an expense from the document's bytes.
  succeeded(
    await api.POST('/expenses/import', {
      params: { query: { category: 'office-supplies' }, header: { 'Idempotency-Key': 'api-check-import' } },
      body: ubl,
      bodySerializer: (body) => body,
      headers: { 'content-type': 'application/xml' },
    }),
  );
  const { credit_note: einvoicedCredit } = succeeded(
    await api.POST('/invoices/{id}/credit-notes', { params: { path: { id: einvoiced.id } }, body: { items: [{ invoice_item_id: einvoiced.items[0].id, quantity: 1 }] } }),
  );
  succeeded(await api.GET('/credit-notes/{id}/einvoice', { params: { path: { id: einvoicedCredit.id }, query: { format: 'cii' } }, parseAs: 'text' }));

  // The PATCH above replaced the draft's lines: the credit note names them as they are now.
  const { invoice: issued } = succeeded(await api.GET('/invoices/{id}', { params: invoiceId }));
  const { credit_note } = succeeded(
    await api.POST('/invoices/{id}/credit-notes', {
      params: invoiceId,
      body: { items: [{ invoice_item_id: issued.items[0].id, quantity: 1 }, { description: 'Goodwill', quantity: 1, unit_price: 5, tax_rate_ids: [tax_rate.id] }], reason: 'order_change', memo: 'One unit returned', refund: true, metadata },
    }),
  );
  const creditNoteId = { path: { id: credit_note.id } };
  succeeded(await api.GET('/credit-notes', { params: { query: { invoice_id: String(invoice.id), client_id: String(client.id) } } }));
  succeeded(await api.GET('/credit-notes/{id}', { params: creditNoteId }));
  succeeded(await api.GET('/credit-notes/{id}/pdf', { params: creditNoteId, parseAs: 'arrayBuffer' }));

  const { recurring_invoice } = succeeded(
    await api.POST('/recurring-invoices', {
      body: { client_id: client.id, currency: 'usd', items: [{ description: 'Retainer', quantity: 1, unit_price: 800 }], default_tax_rate_ids: [tax_rate.id], interval: 'month', start_date: '2099-01-31', days_until_due: 14, auto_send: false, metadata },
      params: { header: { 'Idempotency-Key': 'api-check-recurring' } },
    }),
  );
  const recurringId = { path: { id: recurring_invoice.id } };
  succeeded(await api.GET('/recurring-invoices', { params: { query: { status: 'active', client_id: String(client.id) } } }));
  succeeded(await api.GET('/recurring-invoices/{id}', { params: recurringId }));
  succeeded(await api.PATCH('/recurring-invoices/{id}', { params: recurringId, body: { status: 'paused', end_date: '2099-12-31' } }));
  succeeded(await api.POST('/recurring-invoices/{id}/cancel', { params: recurringId }));

  const deliveries = succeeded(await api.GET('/webhook-deliveries', { params: { query: { event: 'invoice.created' } } }));
  const delivery = deliveries.data[0];
  if (!delivery) throw new Error('no webhook delivery of invoice.created to read and replay');
  succeeded(await api.GET('/webhook-deliveries/{id}', { params: { path: { id: delivery.id } } }));
  succeeded(await api.POST('/webhook-deliveries/{id}/replay', { params: { path: { id: delivery.id } } }));
  succeeded(await api.GET('/events', { params: { query: { type: 'invoice.paid', per_page: 10 } } }));

  const { expense } = succeeded(await api.POST('/expenses', { body: { amount: 12.5, category: 'travel', date: '2026-01-15', vendor: 'Rail' } }));
  const expenseId = { path: { id: expense.id } };
  succeeded(await api.GET('/expenses', { params: { query: { category: 'travel', date_from: '2026-01-01', date_to: '2026-12-31' } } }));
  succeeded(await api.GET('/expenses/{id}', { params: expenseId }));
  succeeded(await api.PATCH('/expenses/{id}', { params: expenseId, body: { notes: 'Return ticket' } }));
  succeeded(await api.DELETE('/expenses/{id}', { params: expenseId }));

  const { contract } = succeeded(await api.POST('/contracts', { body: { title: 'Support agreement', client_id: client.id, body: 'The terms.', type: 'proposal', amount: 100, currency: 'USD', metadata } }));
  const contractId = { path: { id: contract.id } };
  succeeded(await api.GET('/contracts', { params: { query: { type: 'proposal', status: 'pending', metadata } } }));
  succeeded(await api.GET('/contracts/{id}', { params: contractId }));
  succeeded(await api.PATCH('/contracts/{id}', { params: contractId, body: { metadata } }));
  succeeded(await api.POST('/contracts/{id}/countersign', { params: contractId, body: { name: 'Ada Lovelace' } }));

  // Last: from here on the business's test mode runs on the clock this moves forward.
  const { test_clock } = succeeded(await api.GET('/test-clock'));
  const monthLater = new Date(Date.parse(test_clock.now) + 30 * 86_400_000).toISOString();
  succeeded(await api.POST('/test-clock/advance', { body: { to: monthLater } }));
}
