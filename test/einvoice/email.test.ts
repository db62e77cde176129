/**
 * A business's e-invoice format and its invoice e-mails (contract, "E-invoices": `business update
 * --einvoice-format`, and "Wave 3 clarifications": `/send` refuses an invoice not ready for it). The
 * e-mails reach a real SMTP server; the attachments are compared with the API's own documents.
 */
import { aClient, eventsOf, startApp, TestApp } from '../support/app';
import { startSmtpServer, TestSmtp } from '../support/smtp';
import { aSeller, BUYER, created, line } from './support';

let smtp: TestSmtp;
let app: TestApp;

beforeAll(async () => {
  smtp = await startSmtpServer();
  app = await startApp({ smtpUrl: smtp.url, baseUrl: 'https://pay.example.com', emailFirstAttemptWaitMs: 20_000 });
});
afterAll(async () => {
  await app?.stop();
  await smtp?.stop();
});

/** A live seller ready for every format, sending its e-mails with `format`, and a draft to BUYER. */
async function aLiveDraft(format: string) {
  const t = await aSeller(app, 'EUR', { einvoice_format: format });
  const live = await app.tenant({ businessId: t.businessId, mode: 'live' });
  const rate = await created(live, '/tax-rates', { display_name: 'VAT', percentage: 19 }, 'tax_rate');
  const client = await created(live, '/clients', aClient(BUYER), 'client');
  const draft = await created(live, '/invoices', { client_id: client.id, due_date: '2027-01-31', buyer_reference: 'PO-2026-118', items: [line('Design work', 1200)], default_tax_rate_ids: [rate.id] }, 'invoice');
  return { live, client, draft };
}

test('when a business sends XRechnung, then the invoice e-mail carries the PDF and the XRechnung document the API serves', async () => {
  const { live, client, draft } = await aLiveDraft('xrechnung-cii');

  const res = await live.api.post(`/invoices/${draft.id}/send`);

  expect(res.status).toBe(200);
  expect(res.body.email.status).toBe('sent');
  const mail = await smtp.nextMessage({ to: client.email });
  expect(mail.attachments.map(({ filename, contentType }) => ({ filename, contentType }))).toEqual([
    { filename: 'INV-000001.pdf', contentType: 'application/pdf' },
    { filename: 'INV-000001-xrechnung-cii.xml', contentType: 'application/xml' },
  ]);
  const served = await live.api.get(`/invoices/${draft.id}/einvoice?format=xrechnung-cii`);
  expect(mail.attachments[1].content.toString('utf8')).toBe(served.text);
});

test('when a business sends Factur-X, then its PDF replaces the plain one', async () => {
  const { live, client, draft } = await aLiveDraft('facturx');

  await live.api.post(`/invoices/${draft.id}/send`);

  const mail = await smtp.nextMessage({ to: client.email });
  expect(mail.attachments.map(({ filename, contentType }) => ({ filename, contentType }))).toEqual([{ filename: 'INV-000001-facturx.pdf', contentType: 'application/pdf' }]);
  expect(mail.attachments[0].content.includes('factur-x.xml')).toBe(true);
});

test('when an invoice is not ready for the business\'s format, then /send refuses it with what to fix, and nothing is issued or sent', async () => {
  // The seller has no Peppol ID, which a Peppol UBL invoice needs; the client none either.
  const { live, client, draft } = await aLiveDraft('ubl');
  await app.server.services.businesses.update(live.businessId, { peppol_id: null });
  await live.api.patch(`/clients/${client.id}`, { peppol_id: null });
  const before = smtp.messages.length;

  const res = await live.api.post(`/invoices/${draft.id}/send`);

  expect(res.status).toBe(422);
  expect(res.body.error).toBe('einvoice_not_ready');
  expect(Object.keys(res.body.errors).sort()).toEqual(['business.peppol_id', 'client.peppol_id']);
  const after = (await live.api.get(`/invoices/${draft.id}`)).body.invoice;
  expect(after.status).toBe('draft');
  expect(after.number).toBeNull();
  expect((await eventsOf(app, live.businessId)).map((event) => event.type)).not.toContain('invoice.sent');
  expect(smtp.messages.length).toBe(before);
});

test('when a test key sends an invoice not ready for the business\'s format, then it is refused as in live mode', async () => {
  const t = await aSeller(app, 'EUR', { einvoice_format: 'xrechnung-ubl', phone: null });
  const client = await created(t, '/clients', aClient(BUYER), 'client');
  const draft = await created(t, '/invoices', { client_id: client.id, due_date: '2027-01-31', items: [line('Work', 100)] }, 'invoice');

  const res = await t.api.post(`/invoices/${draft.id}/send`);

  expect(res.status).toBe(422);
  expect(res.body.errors['business.phone'][0]).toMatch(/^BR-DE-6: /);
  expect(res.body.errors.buyer_reference[0]).toMatch(/^BR-DE-15: /);
});
