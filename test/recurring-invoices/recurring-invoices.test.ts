/**
 * Recurring invoices (contract, "Collections on a clock" and its clarifications): the resource, and
 * its issuance by the sweep: one invoice per date, dated on that date, month-end starts kept, missed
 * dates caught up one by one, e-mailed only with auto_send, paused dates skipped, never twice.
 */
import pino from 'pino';
import { frozenClock } from '../../server/clock';
import { RecurringInvoiceSweep } from '../../server/recurring-invoices/sweep';
import { todayUtc } from '../../server/clock';
import { scratchDatabase, ScratchDatabase, testDriver } from '../support/database';
import { aClient, eventsOf, startApp, Tenant, TestApp } from '../support/app';
import { startSmtpServer, TestSmtp } from '../support/smtp';

const silent = pino({ level: 'silent' });

/** A schedule body for `clientId`: 100.00 USD a month from `start_date`. */
function aSchedule(clientId: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    client_id: clientId,
    currency: 'USD',
    items: [
      { description: 'Retainer', quantity: 1, unit_price: 80 },
      { description: 'Hosting', quantity: 2, unit_price: 10 },
    ],
    interval: 'month',
    start_date: todayUtc(),
    days_until_due: 14,
    ...overrides,
  };
}

async function aClientOf(t: Tenant): Promise<any> {
  const res = await t.api.post('/clients', aClient());
  if (res.status !== 201) throw new Error(`could not create a client: ${res.status} ${res.text}`);
  return res.body.client;
}

/** A schedule of a new client of `t`; returns it as created. */
async function aRecurringInvoice(t: Tenant, overrides: Record<string, unknown> = {}): Promise<any> {
  const client = await aClientOf(t);
  const res = await t.api.post('/recurring-invoices', aSchedule(client.id, overrides));
  if (res.status !== 201) throw new Error(`could not create a recurring invoice: ${res.status} ${res.text}`);
  return res.body.recurring_invoice;
}

/** The schedule now, and the invoices it issued in order. */
async function issuedBy(t: Tenant, id: number): Promise<{ schedule: any; invoices: any[] }> {
  const schedule = (await t.api.get(`/recurring-invoices/${id}`)).body.recurring_invoice;
  const invoices = await Promise.all(schedule.invoice_ids.map(async (invoiceId: number) => (await t.api.get(`/invoices/${invoiceId}`)).body.invoice));
  return { schedule, invoices };
}

describe('recurring invoices: the resource', () => {
  let app: TestApp;
  let t: Tenant;

  beforeAll(async () => {
    app = await startApp();
    t = await app.tenant();
  });
  afterAll(() => app?.stop());

  test('when a recurring invoice is created, then it is active with its first date next and no invoice yet, and reads back from GET and the list', async () => {
    // Arrange
    const client = await aClientOf(t);
    const rate = (await t.api.post('/tax-rates', { display_name: 'VAT', percentage: 19 })).body.tax_rate;
    const today = todayUtc();

    // Act
    const res = await t.api.post(
      '/recurring-invoices',
      aSchedule(client.id, { currency: 'usd', default_tax_rate_ids: [rate.id], interval: 'quarter', end_date: '2099-12-31', auto_send: false, metadata: { plan: 'gold' } }),
    );

    // Assert
    expect(res.status).toBe(201);
    const created = res.body.recurring_invoice;
    expect(created).toEqual({
      id: expect.any(Number),
      client_id: client.id,
      currency: 'USD',
      items: [
        { description: 'Retainer', quantity: 1, unit_price: 80, tax_rate_ids: null },
        { description: 'Hosting', quantity: 2, unit_price: 10, tax_rate_ids: null },
      ],
      default_tax_rate_ids: [rate.id],
      interval: 'quarter',
      interval_count: 1,
      start_date: today,
      end_date: '2099-12-31',
      days_until_due: 14,
      auto_send: false,
      status: 'active',
      next_issue_date: today,
      invoice_ids: [],
      metadata: { plan: 'gold' },
      livemode: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await t.api.get(`/recurring-invoices/${created.id}`)).body.recurring_invoice).toEqual(created);
    const list = await t.api.get(`/recurring-invoices?client_id=${client.id}&status=active`);
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([created]);
    expect(list.body.meta).toMatchObject({ total: 1, current_page: 1 });
  });

  test('when a recurring invoice is patched, then its lines, terms and end change, and other fields are refused by name', async () => {
    // Arrange
    const schedule = await aRecurringInvoice(t);

    // Act
    const changed = await t.api.patch(`/recurring-invoices/${schedule.id}`, {
      items: [{ description: 'Support', quantity: 1.5, unit_price: 40.25 }],
      days_until_due: 30,
      auto_send: false,
      end_date: '2099-01-31',
      metadata: { plan: 'silver' },
    });
    const refused = await t.api.patch(`/recurring-invoices/${schedule.id}`, { interval: 'week', currency: 'EUR' });

    // Assert
    expect(changed.status).toBe(200);
    expect(changed.body.recurring_invoice).toMatchObject({
      items: [{ description: 'Support', quantity: 1.5, unit_price: 40.25, tax_rate_ids: null }],
      days_until_due: 30,
      auto_send: false,
      end_date: '2099-01-31',
      metadata: { plan: 'silver' },
      status: 'active',
      next_issue_date: schedule.next_issue_date,
    });
    expect(refused.status).toBe(422);
    expect(Object.keys(refused.body.errors).sort()).toEqual(['currency', 'interval']);
    expect(refused.body.errors.interval[0]).toMatch(/cannot change/);
  });

  test('when a recurring invoice is cancelled, then it has ended with no next date, and it can be neither cancelled again nor changed', async () => {
    // Arrange
    const schedule = await aRecurringInvoice(t);

    // Act
    const cancelled = await t.api.post(`/recurring-invoices/${schedule.id}/cancel`);
    const again = await t.api.post(`/recurring-invoices/${schedule.id}/cancel`);
    const resumed = await t.api.patch(`/recurring-invoices/${schedule.id}`, { status: 'active' });

    // Assert
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.recurring_invoice).toMatchObject({ id: schedule.id, status: 'ended', next_issue_date: null });
    expect(again.status).toBe(422);
    expect(again.body.error).toBe('invalid_state');
    expect(resumed.status).toBe(422);
    expect(resumed.body.error).toBe('invalid_state');
    expect((await t.api.get('/recurring-invoices?status=ended')).body.data.map((r: { id: number }) => r.id)).toContain(schedule.id);
  });

  test.each([
    ['no client, items, interval, dates or terms', {}, ['client_id', 'currency', 'days_until_due', 'interval', 'items', 'start_date']],
    ['an unknown interval', { interval: 'day' }, ['interval']],
    ['more than a year between dates', { interval: 'month', interval_count: 13 }, ['interval_count']],
    ['an end before the start', { start_date: '2099-02-01', end_date: '2099-01-31' }, ['end_date']],
    ['a start date that is no calendar date', { start_date: '2099-02-30' }, ['start_date']],
    ['a start date in the past', { start_date: '2020-01-01' }, ['start_date']],
    ['no days until due', { days_until_due: 0 }, ['days_until_due']],
    ['a price with more decimals than the currency', { items: [{ description: 'Fee', quantity: 1, unit_price: 1.005 }] }, ['items.0.unit_price']],
    ['an unknown tax rate', { default_tax_rate_ids: [999999] }, ['default_tax_rate_ids']],
    ['an unknown currency', { currency: 'XYZ' }, ['currency']],
    ['a quantity as a string', { items: [{ description: 'Fee', quantity: '1', unit_price: 1 }] }, ['items.0.quantity']],
  ])('when created with %s, then it is a 422 naming the fields and nothing is made', async (_case, overrides, fields) => {
    // Arrange
    const client = await aClientOf(t);
    const body = Object.keys(overrides).length ? aSchedule(client.id, overrides) : {};

    // Act
    const res = await t.api.post('/recurring-invoices', body);

    // Assert
    expect(res.status).toBe(422);
    expect(res.body.error).toBe('validation_failed');
    expect(Object.keys(res.body.errors).sort()).toEqual(fields);
    expect((await t.api.get(`/recurring-invoices?client_id=${client.id}`)).body.data).toEqual([]);
  });

  test('when the list is asked with an unknown status, then it is a 400', async () => {
    const res = await t.api.get('/recurring-invoices?status=running');

    expect(res.status).toBe(400);
    expect(res.body.errors.status).toBeDefined();
  });

  test('when another business or the other mode asks for a recurring invoice or names its client, then neither exists for it', async () => {
    // Arrange
    const schedule = await aRecurringInvoice(t);
    const other = await app.tenant();
    const live = await app.tenant({ mode: 'live', businessId: t.businessId });

    // Act
    const read = await other.api.get(`/recurring-invoices/${schedule.id}`);
    const readLive = await live.api.get(`/recurring-invoices/${schedule.id}`);
    const patched = await other.api.patch(`/recurring-invoices/${schedule.id}`, { status: 'paused' });
    const cancelled = await other.api.post(`/recurring-invoices/${schedule.id}/cancel`);
    const foreignClient = await other.api.post('/recurring-invoices', aSchedule(schedule.client_id));

    // Assert
    expect([read.status, readLive.status, patched.status, cancelled.status]).toEqual([404, 404, 404, 404]);
    expect(read.body.message).toBe(`Recurring invoice ${schedule.id} not found`);
    expect(foreignClient.status).toBe(422);
    expect(foreignClient.body.errors).toEqual({ client_id: ['does not name a client of this business'] });
    expect((await other.api.get('/recurring-invoices')).body.data).toEqual([]);
    expect((await t.api.get(`/recurring-invoices/${schedule.id}`)).body.recurring_invoice.status).toBe('active');
  });

  test('when a key has only invoices:read, then it reads recurring invoices but cannot create one', async () => {
    const reader = await app.tenant({ businessId: t.businessId, scopes: ['invoices:read'] });
    const client = await aClientOf(t);

    const list = await reader.api.get('/recurring-invoices');
    const create = await reader.api.post('/recurring-invoices', aSchedule(client.id));

    expect(list.status).toBe(200);
    expect(create.status).toBe(403);
  });

  test('when one Idempotency-Key is sent twice, then one recurring invoice is made and both answers show it', async () => {
    // Arrange
    const client = await aClientOf(t);
    const headers = { 'idempotency-key': `schedule-${client.id}` };

    // Act
    const first = await t.api.post('/recurring-invoices', aSchedule(client.id), { headers });
    const second = await t.api.post('/recurring-invoices', aSchedule(client.id), { headers });

    // Assert
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.body).toEqual(first.body);
    expect((await t.api.get(`/recurring-invoices?client_id=${client.id}`)).body.meta.total).toBe(1);
  });

  test('when a client has a recurring invoice, then deleting it is a 422 invalid_state and it stays', async () => {
    // Arrange
    const schedule = await aRecurringInvoice(t);

    // Act
    const res = await t.api.delete(`/clients/${schedule.client_id}`);

    // Assert
    expect(res.status).toBe(422);
    expect(res.body.error).toBe('invalid_state');
    expect(res.body.message).toMatch(/recurring invoices/);
    expect((await t.api.get(`/clients/${schedule.client_id}`)).status).toBe(200);
  });
});

describe('recurring invoices: issuance', () => {
  let scratch: ScratchDatabase;
  let app: TestApp;
  /** As in the overdue tests: on MariaDB a second server over the same database; on SQLite a second sweep on the app's handle. */
  let other: TestApp | undefined;
  let sweepers: RecurringInvoiceSweep[];

  beforeAll(async () => {
    scratch = await scratchDatabase({ migrated: true });
    app = await startApp({}, { keepDatabase: scratch });
    if (testDriver() === 'mysql') other = await startApp({}, { keepDatabase: scratch });
    sweepers = [app.server.services.recurringSweep, other?.server.services.recurringSweep ?? new RecurringInvoiceSweep(app.db, app.server.services.recurringInvoices, silent)];
  });
  afterAll(async () => {
    await other?.stop();
    await app?.stop();
    await scratch?.drop();
  });

  const sweep = () => app.server.services.recurringSweep.sweep();
  /** A test-mode tenant whose clock stands at `at`. */
  async function frozenAt(at: string): Promise<Tenant> {
    const t = await app.tenant();
    await app.server.services.clocks.freezeTestMode(t.businessId, new Date(at));
    return t;
  }
  const moveTo = (t: Tenant, at: string) => app.server.services.clocks.freezeTestMode(t.businessId, new Date(at));

  test('when a month-end start is swept months later, then one invoice per missed date is issued, each dated at its own date, on the last day of shorter months', async () => {
    // Arrange
    const t = await frozenAt('2031-01-15T10:00:00.000Z');
    const schedule = await aRecurringInvoice(t, { start_date: '2031-01-31', days_until_due: 10, auto_send: false });
    await moveTo(t, '2031-05-02T08:00:00.000Z');

    // Act
    const issued = await sweep();
    await sweep();

    // Assert
    expect(issued).toBe(4);
    const { schedule: after, invoices } = await issuedBy(t, schedule.id);
    expect(after).toMatchObject({ status: 'active', next_issue_date: '2031-05-31' });
    expect(invoices.map((i) => [i.issue_date, i.due_date, i.created_at, i.sent_at])).toEqual([
      ['2031-01-31', '2031-02-10', '2031-01-31T00:00:00.000Z', '2031-01-31T00:00:00.000Z'],
      ['2031-02-28', '2031-03-10', '2031-02-28T00:00:00.000Z', '2031-02-28T00:00:00.000Z'],
      ['2031-03-31', '2031-04-10', '2031-03-31T00:00:00.000Z', '2031-03-31T00:00:00.000Z'],
      ['2031-04-30', '2031-05-10', '2031-04-30T00:00:00.000Z', '2031-04-30T00:00:00.000Z'],
    ]);
    expect(invoices.map((i) => i.number)).toEqual(['INV-000001', 'INV-000002', 'INV-000003', 'INV-000004']);
    for (const invoice of invoices) {
      expect(invoice).toMatchObject({ client_id: schedule.client_id, status: 'sent', currency: 'USD', total: 100, amount_due: 100 });
      expect(invoice.items.map((item: { description: string }) => item.description)).toEqual(['Retainer', 'Hosting']);
    }
  });

  test('when a test clock runs the due work of one business, then every date up to that time is issued, dated on its date, and other businesses wait', async () => {
    // Arrange
    const t = await frozenAt('2032-01-01T00:00:00.000Z');
    const weekly = await aRecurringInvoice(t, { interval: 'week', interval_count: 2, start_date: '2032-01-05', auto_send: false });
    const yearly = await aRecurringInvoice(t, { interval: 'year', start_date: '2032-02-29', auto_send: false });
    const bystander = await frozenAt('2032-01-01T00:00:00.000Z');
    const untouched = await aRecurringInvoice(bystander, { start_date: '2032-01-05', auto_send: false });

    // Act
    await app.server.services.recurringSweep.runDue({ businessId: t.businessId, livemode: false }, new Date('2032-03-01T00:00:00.000Z'));

    // Assert
    const weeklyIssued = await issuedBy(t, weekly.id);
    expect(weeklyIssued.invoices.map((i) => i.issue_date)).toEqual(['2032-01-05', '2032-01-19', '2032-02-02', '2032-02-16', '2032-03-01']);
    expect(weeklyIssued.invoices.map((i) => i.created_at)).toEqual(weeklyIssued.invoices.map((i) => `${i.issue_date}T00:00:00.000Z`));
    expect(weeklyIssued.schedule.next_issue_date).toBe('2032-03-15');
    const yearlyIssued = await issuedBy(t, yearly.id);
    expect(yearlyIssued.invoices.map((i) => i.issue_date)).toEqual(['2032-02-29']);
    expect(yearlyIssued.schedule.next_issue_date).toBe('2033-02-28');
    expect((await issuedBy(bystander, untouched.id)).invoices).toEqual([]);
    // The numbers follow the dates across both schedules.
    const all = [...weeklyIssued.invoices, ...yearlyIssued.invoices].sort((a, b) => a.number.localeCompare(b.number));
    expect(all.map((i) => i.issue_date)).toEqual(['2032-01-05', '2032-01-19', '2032-02-02', '2032-02-16', '2032-02-29', '2032-03-01']);
  });

  test('when live-mode dates were missed while no process ran, then the next sweep issues one invoice per missed date', async () => {
    // Arrange
    const live = await app.tenant({ mode: 'live' });
    const today = todayUtc();
    const schedule = await aRecurringInvoice(live, { interval: 'week', start_date: today, auto_send: false });
    const threeWeeksOn = new Date(Date.parse(`${today}T12:00:00.000Z`) + 21 * 86_400_000);
    const late = new RecurringInvoiceSweep(app.db, app.server.services.recurringInvoices, silent, { clock: frozenClock(threeWeeksOn) });

    // Act
    const issued = await late.sweep();

    // Assert
    expect(issued).toBeGreaterThanOrEqual(4);
    const { invoices, schedule: after } = await issuedBy(live, schedule.id);
    expect(invoices).toHaveLength(4);
    expect(new Set(invoices.map((i) => i.issue_date)).size).toBe(4);
    expect(invoices[0].issue_date).toBe(today);
    expect(after.next_issue_date > threeWeeksOn.toISOString().slice(0, 10)).toBe(true);
  });

  test('when a schedule is paused over dates and resumed, then those dates are never issued and the next one is', async () => {
    // Arrange
    const t = await frozenAt('2033-01-10T06:00:00.000Z');
    const schedule = await aRecurringInvoice(t, { start_date: '2033-01-10', auto_send: false });
    await sweep();
    const paused = await t.api.patch(`/recurring-invoices/${schedule.id}`, { status: 'paused' });
    await moveTo(t, '2033-03-15T00:00:00.000Z');
    await sweep();

    // Act
    const resumed = await t.api.patch(`/recurring-invoices/${schedule.id}`, { status: 'active' });
    await sweep();
    await moveTo(t, '2033-04-10T00:00:00.000Z');
    await sweep();

    // Assert
    expect(paused.body.recurring_invoice).toMatchObject({ status: 'paused', next_issue_date: '2033-02-10' });
    expect(resumed.status).toBe(200);
    expect(resumed.body.recurring_invoice).toMatchObject({ status: 'active', next_issue_date: '2033-04-10' });
    const { invoices, schedule: after } = await issuedBy(t, schedule.id);
    expect(invoices.map((i) => i.issue_date)).toEqual(['2033-01-10', '2033-04-10']);
    expect(after.next_issue_date).toBe('2033-05-10');
  });

  test('when the last date before end_date is issued, then the schedule ends; an end_date before the next date ends it at once', async () => {
    // Arrange
    const t = await frozenAt('2034-01-01T00:00:00.000Z');
    const ending = await aRecurringInvoice(t, { start_date: '2034-01-31', end_date: '2034-03-30', auto_send: false });
    const shortened = await aRecurringInvoice(t, { start_date: '2034-01-15', auto_send: false });
    await moveTo(t, '2034-06-01T00:00:00.000Z');

    // Act
    await sweep();
    const cut = await t.api.patch(`/recurring-invoices/${shortened.id}`, { end_date: '2034-06-01' });

    // Assert
    const { invoices, schedule } = await issuedBy(t, ending.id);
    expect(invoices.map((i) => i.issue_date)).toEqual(['2034-01-31', '2034-02-28']);
    expect(schedule).toMatchObject({ status: 'ended', next_issue_date: null });
    expect(cut.body.recurring_invoice).toMatchObject({ status: 'ended', next_issue_date: null });
    expect(cut.body.recurring_invoice.invoice_ids).toHaveLength(5);
  });

  test('when the start moves before the first invoice, then the dates follow it; once issued, the start is fixed and new lines go on the next invoices only', async () => {
    // Arrange
    const t = await frozenAt('2037-01-01T00:00:00.000Z');
    const schedule = await aRecurringInvoice(t, { start_date: '2037-01-10', auto_send: false });

    // Act
    const moved = await t.api.patch(`/recurring-invoices/${schedule.id}`, { start_date: '2037-01-31' });
    await moveTo(t, '2037-01-31T00:00:00.000Z');
    await sweep();
    const fixed = await t.api.patch(`/recurring-invoices/${schedule.id}`, { start_date: '2037-02-15' });
    const relined = await t.api.patch(`/recurring-invoices/${schedule.id}`, { items: [{ description: 'Bigger plan', quantity: 1, unit_price: 150 }] });
    await moveTo(t, '2037-02-28T00:00:00.000Z');
    await sweep();

    // Assert
    expect(moved.body.recurring_invoice).toMatchObject({ start_date: '2037-01-31', next_issue_date: '2037-01-31' });
    expect(fixed.status).toBe(422);
    expect(fixed.body.errors.start_date[0]).toMatch(/cannot change once the schedule has issued an invoice/);
    expect(relined.status).toBe(200);
    const { invoices } = await issuedBy(t, schedule.id);
    expect(invoices.map((i) => [i.issue_date, i.total])).toEqual([
      ['2037-01-31', 100],
      ['2037-02-28', 150],
    ]);
  });

  test('when a paused schedule is resumed with its start moved to today, then today is issued, not skipped', async () => {
    // Arrange: paused before its first date, no invoice yet
    const t = await frozenAt('2038-01-01T00:00:00.000Z');
    const schedule = await aRecurringInvoice(t, { start_date: '2038-01-20', auto_send: false });
    await t.api.patch(`/recurring-invoices/${schedule.id}`, { status: 'paused' });
    await moveTo(t, '2038-02-05T08:00:00.000Z');

    // Act
    const resumed = await t.api.patch(`/recurring-invoices/${schedule.id}`, { start_date: '2038-02-05', status: 'active' });
    await sweep();

    // Assert
    expect(resumed.status).toBe(200);
    expect(resumed.body.recurring_invoice).toMatchObject({ status: 'active', start_date: '2038-02-05', next_issue_date: '2038-02-05' });
    const { invoices } = await issuedBy(t, schedule.id);
    expect(invoices.map((i) => i.issue_date)).toEqual(['2038-02-05']);
  });

  test('when a schedule is made during its first date, then that invoice is dated when the schedule was made, not before it existed', async () => {
    // Arrange
    const t = await frozenAt('2039-03-10T09:30:00.000Z');
    const schedule = await aRecurringInvoice(t, { start_date: '2039-03-10', auto_send: false });

    // Act
    await sweep();
    await moveTo(t, '2039-04-10T00:00:00.000Z');
    await sweep();

    // Assert
    const { invoices } = await issuedBy(t, schedule.id);
    expect(invoices.map((i) => [i.issue_date, i.created_at, i.sent_at])).toEqual([
      ['2039-03-10', schedule.created_at, schedule.created_at],
      ['2039-04-10', '2039-04-10T00:00:00.000Z', '2039-04-10T00:00:00.000Z'],
    ]);
    const created = (await t.api.get('/events?type=invoice.created')).body.data;
    expect(created.map((e: { created_at: string }) => e.created_at)).toEqual([schedule.created_at, '2039-04-10T00:00:00.000Z']);
  });

  test('when a rate on the schedule is archived after it was made, then its invoices still take it', async () => {
    // Arrange
    const t = await frozenAt('2035-01-01T00:00:00.000Z');
    const rate = (await t.api.post('/tax-rates', { display_name: 'VAT', percentage: 20 })).body.tax_rate;
    const schedule = await aRecurringInvoice(t, { start_date: '2035-01-02', default_tax_rate_ids: [rate.id], auto_send: false });
    await t.api.patch(`/tax-rates/${rate.id}`, { active: false });
    await moveTo(t, '2035-01-02T00:00:00.000Z');

    // Act
    await sweep();

    // Assert
    const { invoices } = await issuedBy(t, schedule.id);
    expect(invoices).toHaveLength(1);
    expect(invoices[0]).toMatchObject({ total_tax: 20, total: 120, default_tax_rate_ids: [rate.id] });
  });

  test('when the dates of several auto_send schedules of one business are issued at once, then each is issued (no deadlock on the number) and the numbers have no gap', async () => {
    // Arrange
    const t = await frozenAt('2037-01-01T00:00:00.000Z');
    const schedules = await Promise.all([1, 2, 3, 4, 5, 6].map(() => aRecurringInvoice(t, { start_date: '2037-01-01', interval: 'week', auto_send: true })));
    const tenancy = { businessId: t.businessId, livemode: false };
    const issueAll = (date: string) => Promise.all(schedules.map((schedule) => app.server.services.recurringInvoices.issue(tenancy, schedule.id, date)));

    // Act
    const first = await issueAll('2037-01-01');
    const second = await issueAll('2037-01-08');

    // Assert
    expect([...first, ...second]).toEqual([...schedules.map(() => '2037-01-08'), ...schedules.map(() => '2037-01-15')]);
    const invoices = (await t.api.get('/invoices?per_page=100')).body.data;
    expect(invoices.map((i: { number: string }) => i.number).sort()).toEqual(Array.from({ length: 12 }, (_, n) => `INV-${String(n + 1).padStart(6, '0')}`));
    expect(invoices.every((i: { status: string }) => i.status === 'sent')).toBe(true);
  });

  test('when two server processes sweep at once, then each date of each schedule is issued exactly once', async () => {
    // Arrange
    const t = await frozenAt('2036-01-01T00:00:00.000Z');
    const schedules = await Promise.all([1, 2, 3, 4].map((n) => aRecurringInvoice(t, { start_date: `2036-01-0${n + 1}`, auto_send: n % 2 === 0 })));
    await moveTo(t, '2036-03-06T00:00:00.000Z');

    // Act
    await Promise.all([...sweepers, ...sweepers].map((sweeper) => sweeper.sweep()));
    await Promise.all(sweepers.map((sweeper) => sweeper.runDue({ businessId: t.businessId, livemode: false }, new Date('2036-03-06T00:00:00.000Z'))));

    // Assert
    const invoices = (await t.api.get('/invoices?per_page=100')).body.data;
    expect(invoices).toHaveLength(12);
    for (const schedule of schedules) {
      const { invoices: own } = await issuedBy(t, schedule.id);
      expect(own.map((i) => i.issue_date.slice(5))).toEqual(['01-' + schedule.start_date.slice(8), '02-' + schedule.start_date.slice(8), '03-' + schedule.start_date.slice(8)]);
    }
    expect(new Set(invoices.map((i: { number: string }) => i.number)).size).toBe(12);
    const created = (await eventsOf(app, t.businessId)).filter((e) => e.type === 'invoice.created');
    expect(created).toHaveLength(12);
  });
});

describe('recurring invoices: e-mail', () => {
  let smtp: TestSmtp;
  let app: TestApp;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    app = await startApp({ smtpUrl: smtp.url, baseUrl: 'https://pay.example.com' });
  });
  afterAll(async () => {
    await app?.stop();
    await smtp?.stop();
  });

  test('when a live date is issued with auto_send, then the client gets the invoice by e-mail and invoice.sent fires', async () => {
    // Arrange
    const live = await app.tenant({ mode: 'live' });
    const schedule = await aRecurringInvoice(live, { auto_send: true });
    const client = (await live.api.get(`/clients/${schedule.client_id}`)).body.client;

    // Act
    await app.server.services.recurringSweep.sweep();

    // Assert
    const { invoices } = await issuedBy(live, schedule.id);
    expect(invoices).toHaveLength(1);
    expect(invoices[0]).toMatchObject({ status: 'sent', number: 'INV-000001', issue_date: todayUtc() });
    const mail = await smtp.nextMessage({ to: client.email });
    expect(mail.subject).toContain('INV-000001');
    expect(mail.text).toContain(invoices[0].payment_url);
    const types = (await eventsOf(app, live.businessId)).map((e) => e.type);
    expect(types).toEqual(['invoice.created', 'invoice.sent']);
  });

  test('when a live date is issued without auto_send, then the invoice is numbered, sent and payable but no e-mail goes out', async () => {
    // Arrange
    const live = await app.tenant({ mode: 'live' });
    const schedule = await aRecurringInvoice(live, { auto_send: false });
    const client = (await live.api.get(`/clients/${schedule.client_id}`)).body.client;

    // Act
    await app.server.services.recurringSweep.sweep();

    // Assert
    const { invoices } = await issuedBy(live, schedule.id);
    expect(invoices).toHaveLength(1);
    expect(invoices[0]).toMatchObject({ status: 'sent', number: 'INV-000001' });
    expect(invoices[0].payment_url).toMatch(/^https:\/\/pay\.example\.com\//);
    expect((await app.db.knex('email_messages').where('business_id', live.businessId)).length).toBe(0);
    expect(smtp.messages.filter((m) => m.rcptTo.includes(client.email))).toEqual([]);
    expect((await eventsOf(app, live.businessId)).map((e) => e.type)).toEqual(['invoice.created']);
  });

  test('when a test-mode date is issued with auto_send, then invoice.sent fires but no e-mail is written', async () => {
    const t = await app.tenant();
    const schedule = await aRecurringInvoice(t, { auto_send: true });

    await app.server.services.recurringSweep.sweep();

    const { invoices } = await issuedBy(t, schedule.id);
    expect(invoices).toHaveLength(1);
    expect((await app.db.knex('email_messages').where('business_id', t.businessId)).length).toBe(0);
    expect((await eventsOf(app, t.businessId)).map((e) => e.type)).toEqual(['invoice.created', 'invoice.sent']);
  });
});
