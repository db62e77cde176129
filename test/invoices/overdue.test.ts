/**
 * Overdue invoices (contract, "Collections on a clock"): an issued invoice whose due date has ended
 * (UTC, by the clock of its business and mode) with an amount due is `overdue` in every invoice
 * representation, `GET /invoices?overdue=` filters on it, and `invoice.overdue` fires once per
 * invoice, however many sweeps run at once; an invoice overdue before the upgrade fires nothing.
 */
import { migrateDown, migrateLatest } from '../../server/db/migrate';
import { fromDbTime } from '../../server/db/time';
import { InvoiceLinks } from '../../server/invoices/links';
import { CollectionSteps } from '../../server/invoices/collection-steps';
import { OverdueSweep } from '../../server/invoices/overdue';
import { scratchDatabase, ScratchDatabase, testDriver } from '../support/database';
import pino from 'pino';
import { aClient, anInvoice, eventsOf, startApp, Tenant, TestApp } from '../support/app';

const MIGRATION = '20261203100000_add_overdue_notified_at_to_invoices';
const PAST = { issue_date: '2024-01-01', due_date: '2024-01-31' };
const FUTURE = { issue_date: '2024-01-01', due_date: '2099-12-31' };

/** A sent invoice of the tenant with these dates. */
async function aSentInvoice(t: Tenant, dates: { issue_date: string; due_date: string }): Promise<any> {
  const client = (await t.api.post('/clients', aClient())).body.client;
  const draft = (await t.api.post('/invoices', anInvoice(client.id, dates))).body.invoice;
  const sent = await t.api.post(`/invoices/${draft.id}/send`);
  if (sent.status !== 200) throw new Error(`could not send: ${sent.status} ${sent.text}`);
  return sent.body.invoice;
}

async function overdueEvents(app: TestApp, businessId: number) {
  return (await eventsOf(app, businessId)).filter((event) => event.type === 'invoice.overdue');
}

describe('overdue invoices', () => {
  let scratch: ScratchDatabase;
  let app: TestApp;
  /**
   * On MariaDB, a second server over the same database (its own connection pool, as another process
   * has). On SQLite two handles of one file cannot write side by side in one Node process (a waiting
   * handle blocks the thread the other needs to commit): there the second sweeper shares the app's
   * handle, and its transactions interleave with the first's as another process's would.
   */
  let other: TestApp | undefined;
  let sweepers: OverdueSweep[];

  beforeAll(async () => {
    scratch = await scratchDatabase({ migrated: true });
    app = await startApp({}, { keepDatabase: scratch });
    const services = app.server.services;
    if (testDriver() === 'mysql') other = await startApp({}, { keepDatabase: scratch });
    sweepers = [
      services.overdue,
      other?.server.services.overdue ?? new OverdueSweep(app.db, new CollectionSteps(app.db, services.outbox, services.emails, new InvoiceLinks(app.url)), pino({ level: 'silent' })),
    ];
  });
  afterAll(async () => {
    await other?.stop();
    await app?.stop();
    await scratch?.drop();
  });

  /** Both sweepers at once, twice each. */
  const sweepTogether = () => Promise.all([...sweepers, ...sweepers].map((sweeper) => sweeper.sweep()));

  test('when an issued invoice is past its due date with an amount due, then it is overdue in its detail, the list and its payment status; others are not', async () => {
    // Arrange
    const t = await app.tenant();
    const overdue = await aSentInvoice(t, PAST);
    const notYetDue = await aSentInvoice(t, FUTURE);
    const client = (await t.api.post('/clients', aClient())).body.client;
    const draft = (await t.api.post('/invoices', anInvoice(client.id, PAST))).body.invoice;
    const paid = await aSentInvoice(t, PAST);
    await t.api.post(`/invoices/${paid.id}/simulate-payment`, {});

    // Act
    const detail = await t.api.get(`/invoices/${overdue.id}`);
    const status = await t.api.get(`/invoices/${overdue.id}/payment-status`);
    const list = await t.api.get('/invoices?per_page=100');

    // Assert
    expect(overdue.overdue).toBe(true);
    expect(detail.body.invoice).toMatchObject({ id: overdue.id, overdue: true });
    expect(status.body).toEqual({ invoice_id: overdue.id, status: 'sent', currency: 'USD', total: 150, amount_paid: 0, amount_due: 150, overdue: true });
    const flags = Object.fromEntries(list.body.data.map((row: { id: number; overdue: boolean }) => [row.id, row.overdue]));
    expect(flags).toEqual({ [overdue.id]: true, [notYetDue.id]: false, [draft.id]: false, [paid.id]: false });
    expect((await t.api.get(`/invoices/${paid.id}/payment-status`)).body).toMatchObject({ status: 'paid', amount_due: 0, overdue: false });
  });

  test('when invoices are listed with ?overdue=true or false, then only the overdue ones, or only the others, come back; another value is a 400', async () => {
    // Arrange
    const t = await app.tenant();
    const overdue = await aSentInvoice(t, PAST);
    const partlyPaid = await aSentInvoice(t, PAST);
    await t.api.post(`/invoices/${partlyPaid.id}/simulate-payment`, { amount: 50 });
    const notYetDue = await aSentInvoice(t, FUTURE);
    const paid = await aSentInvoice(t, PAST);
    await t.api.post(`/invoices/${paid.id}/simulate-payment`, {});

    // Act
    const onlyOverdue = await t.api.get('/invoices?overdue=true');
    const notOverdue = await t.api.get('/invoices?overdue=false');
    const wrong = await t.api.get('/invoices?overdue=yes');

    // Assert
    expect(onlyOverdue.status).toBe(200);
    expect(onlyOverdue.body.data.map((row: { id: number }) => row.id).sort()).toEqual([overdue.id, partlyPaid.id].sort());
    expect(notOverdue.body.data.map((row: { id: number }) => row.id).sort()).toEqual([notYetDue.id, paid.id].sort());
    expect(wrong.status).toBe(400);
  });

  test('when two server processes sweep at the same time, then invoice.overdue fires once per overdue invoice, with the invoice', async () => {
    // Arrange
    const t = await app.tenant();
    const overdue = await Promise.all([1, 2, 3, 4, 5].map(() => aSentInvoice(t, PAST)));
    await aSentInvoice(t, FUTURE);

    // Act
    await sweepTogether();
    await sweepTogether();

    // Assert
    const events = await overdueEvents(app, t.businessId);
    expect(events.map((event) => event.data.invoice.id).sort()).toEqual(overdue.map((invoice) => invoice.id).sort());
    for (const event of events) expect(event.data.invoice).toMatchObject({ status: 'sent', overdue: true, amount_due: 150 });
    const logged = await t.api.get('/events?type=invoice.overdue');
    expect(logged.status).toBe(200);
    expect(logged.body.data).toHaveLength(5);
  });

  test('when one sweep fires invoice.overdue for more invoices than one transaction takes, of several businesses, then each event is delivered once, to the webhook of its own business only', async () => {
    // Arrange: three businesses with a webhook key each, 20 overdue invoices each (60: two batches, each mixing businesses)
    const tenants = await Promise.all([1, 2, 3].map(() => app.tenant({ webhookUrl: 'http://127.0.0.1:9/hooks' })));
    const invoices = new Map<number, number[]>();
    for (const t of tenants) invoices.set(t.businessId, (await Promise.all(Array.from({ length: 20 }, () => aSentInvoice(t, PAST)))).map((invoice) => invoice.id));

    // Act
    await app.server.services.overdue.sweep();

    // Assert
    for (const t of tenants) {
      const events = await overdueEvents(app, t.businessId);
      expect(events.map((event) => event.data.invoice.id).sort()).toEqual([...invoices.get(t.businessId)!].sort());
      const deliveries = await app.db
        .knex('webhook_deliveries')
        .join('events', 'events.id', 'webhook_deliveries.event_id')
        .join('api_keys', 'api_keys.id', 'webhook_deliveries.api_key_id')
        .where('events.business_id', t.businessId)
        .where('events.type', 'invoice.overdue')
        .select('webhook_deliveries.event_id', 'webhook_deliveries.business_id', 'api_keys.business_id as key_business_id');
      expect(deliveries).toHaveLength(20);
      expect(new Set(deliveries.map((delivery: { event_id: number }) => delivery.event_id)).size).toBe(20);
      for (const delivery of deliveries) expect([delivery.business_id, delivery.key_business_id]).toEqual([t.businessId, t.businessId]);
    }
  });

  test('when an overdue invoice is paid or voided before the sweep, then no invoice.overdue fires for it', async () => {
    // Arrange
    const t = await app.tenant();
    const paid = await aSentInvoice(t, PAST);
    await t.api.post(`/invoices/${paid.id}/simulate-payment`, {});
    const voided = await aSentInvoice(t, PAST);
    expect((await t.api.post(`/invoices/${voided.id}/void`, {})).status).toBe(200);
    const client = (await t.api.post('/clients', aClient())).body.client;
    await t.api.post('/invoices', anInvoice(client.id, PAST));

    // Act
    await app.server.services.overdue.sweep();

    // Assert
    expect(await overdueEvents(app, t.businessId)).toEqual([]);
    expect((await t.api.get(`/invoices/${voided.id}`)).body.invoice).toMatchObject({ status: 'void', overdue: false });
  });

  test('when a test-mode business clock is frozen, then overdue and invoice.overdue follow that clock, not the real time', async () => {
    // Arrange: one business frozen before its invoice's due date, another frozen long before a due date the real time has passed
    const ahead = await app.tenant();
    const clocks = app.server.services.clocks;
    await clocks.freezeTestMode(ahead.businessId, new Date('2031-03-14T09:00:00.000Z'));
    const dueSoon = await aSentInvoice(ahead, { issue_date: '2031-03-14', due_date: '2031-03-20' });
    const behind = await app.tenant();
    await clocks.freezeTestMode(behind.businessId, new Date('2023-06-01T00:00:00.000Z'));
    const dueByRealTime = await aSentInvoice(behind, PAST);
    await app.server.services.overdue.sweep();
    const before = { soon: (await ahead.api.get(`/invoices/${dueSoon.id}`)).body.invoice, real: (await behind.api.get(`/invoices/${dueByRealTime.id}`)).body.invoice };

    // Act: the first business's time moves past the end of the due date
    await clocks.freezeTestMode(ahead.businessId, new Date('2031-03-21T00:00:00.000Z'));
    await sweepTogether();

    // Assert
    expect(before.soon.overdue).toBe(false);
    expect(before.real.overdue).toBe(false);
    expect((await ahead.api.get(`/invoices/${dueSoon.id}`)).body.invoice.overdue).toBe(true);
    const fired = await overdueEvents(app, ahead.businessId);
    expect(fired).toHaveLength(1);
    expect(fired[0].data.invoice).toMatchObject({ id: dueSoon.id, overdue: true });
    expect(await overdueEvents(app, behind.businessId)).toEqual([]);
    expect((await behind.api.get('/invoices?overdue=true')).body.data).toEqual([]);
  });

  test('when time jumps past a due date (downtime, a clock moved on), then invoice.overdue is still dated at 00:00 UTC after the due date, and so is its mark', async () => {
    // Arrange
    const t = await app.tenant();
    await app.server.services.clocks.freezeTestMode(t.businessId, new Date('2031-03-14T09:00:00.000Z'));
    const invoice = await aSentInvoice(t, { issue_date: '2031-03-14', due_date: '2031-03-20' });

    // Act: the business's time jumps eleven days at once
    await app.server.services.clocks.freezeTestMode(t.businessId, new Date('2031-04-01T15:30:00.000Z'));
    await sweepTogether();

    // Assert
    const fired = (await t.api.get('/events?type=invoice.overdue')).body.data;
    expect(fired).toHaveLength(1);
    expect(fired[0].created_at).toBe('2031-03-21T00:00:00.000Z');
    expect(fired[0].data.invoice).toMatchObject({ id: invoice.id, overdue: true, updated_at: invoice.updated_at });
    const row = await app.db.knex('invoices').where({ id: invoice.id }).first('overdue_notified_at');
    expect(fromDbTime(row.overdue_notified_at)).toBe('2031-03-21T00:00:00.000Z');
  });

  test('when an invoice is sent with a due date already past, then invoice.overdue is dated when it was sent', async () => {
    // Arrange
    const t = await app.tenant();
    const sent = await aSentInvoice(t, PAST);

    // Act
    await app.server.services.overdue.sweep();

    // Assert
    const fired = (await t.api.get('/events?type=invoice.overdue')).body.data;
    expect(fired.map((event: { created_at: string }) => event.created_at)).toEqual([sent.sent_at]);
  });

  test('when the due date ends on a frozen clock exactly at midnight UTC, then the invoice is overdue only from the next day', async () => {
    // Arrange
    const t = await app.tenant();
    await app.server.services.clocks.freezeTestMode(t.businessId, new Date('2031-03-20T23:59:59.999Z'));
    const invoice = await aSentInvoice(t, { issue_date: '2031-03-01', due_date: '2031-03-20' });
    await app.server.services.overdue.sweep();
    const onDueDate = (await t.api.get(`/invoices/${invoice.id}`)).body.invoice.overdue;

    // Act
    await app.server.services.clocks.freezeTestMode(t.businessId, new Date('2031-03-21T00:00:00.000Z'));
    await app.server.services.overdue.sweep();

    // Assert
    expect(onDueDate).toBe(false);
    expect((await t.api.get(`/invoices/${invoice.id}`)).body.invoice.overdue).toBe(true);
    expect(await overdueEvents(app, t.businessId)).toHaveLength(1);
  });
});

describe('overdue invoices at the upgrade', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app?.stop());

  test('when an invoice was past its due date before the upgrade, then it is overdue but fires no invoice.overdue; one that becomes overdue later fires', async () => {
    // Arrange: an overdue invoice, and one of a frozen test clock not yet due, then the database as it was before the migration
    const t = await app.tenant();
    const before = await aSentInvoice(t, PAST);
    const frozen = await app.tenant();
    await app.server.services.clocks.freezeTestMode(frozen.businessId, new Date('2031-03-14T09:00:00.000Z'));
    const later = await aSentInvoice(frozen, { issue_date: '2031-03-14', due_date: '2031-03-20' });
    await migrateDown(app.db.knex, MIGRATION);

    // Act
    await migrateLatest(app.db.knex);
    await app.server.services.overdue.sweep();
    await app.server.services.clocks.freezeTestMode(frozen.businessId, new Date('2031-04-01T00:00:00.000Z'));
    await app.server.services.overdue.sweep();

    // Assert
    expect((await t.api.get(`/invoices/${before.id}`)).body.invoice.overdue).toBe(true);
    expect(await overdueEvents(app, t.businessId)).toEqual([]);
    expect((await overdueEvents(app, frozen.businessId)).map((event) => event.data.invoice.id)).toEqual([later.id]);
  });
});
