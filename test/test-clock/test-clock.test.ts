/**
 * Test clocks (contract, "Collections on a clock"): `GET /test-clock` and `POST /test-clock/advance`
 * move a business's test-mode time forward, never back; what falls due on the way (here
 * `invoice.overdue`) runs at each moment it was due and is dated then, before the call returns.
 * Other businesses and live mode keep the real time.
 */
import { systemActor } from '../../server/auth/actor';
import { businessClock } from '../../server/clock';
import { Tenancy, TimeDrivenWork } from '../../server/db/clocks';
import { TestClockService } from '../../server/test-clock/service';
import { aClient, anInvoice, startApp, Tenant, TestApp } from '../support/app';
import { scratchDatabase, ScratchDatabase, testDriver } from '../support/database';
import { Api } from '../support/http';

/** Within five years of the real time (late 2026), as one advance may go. */
const START = '2030-03-14T09:00:00.000Z';

/** Whether an ISO time is the real time of this test run (within a minute). */
const isRealTime = (iso: string) => Math.abs(Date.parse(iso) - Date.now()) < 60_000;

async function aSentInvoice(t: Tenant, dates: { issue_date: string; due_date: string }): Promise<any> {
  const client = (await t.api.post('/clients', aClient())).body.client;
  const draft = (await t.api.post('/invoices', anInvoice(client.id, dates))).body.invoice;
  const sent = await t.api.post(`/invoices/${draft.id}/send`);
  if (sent.status !== 200) throw new Error(`could not send: ${sent.status} ${sent.text}`);
  return sent.body.invoice;
}

async function overdueEvents(t: Tenant): Promise<{ created_at: string; data: { invoice: any } }[]> {
  return (await t.api.get('/events?type=invoice.overdue&per_page=100')).body.data;
}

/** A test-mode business whose clock stands at START. */
async function aStartedBusiness(app: TestApp): Promise<Tenant> {
  const t = await app.tenant();
  const started = await t.api.post('/test-clock/advance', { to: START });
  if (started.status !== 200) throw new Error(`could not start the clock: ${started.status} ${started.text}`);
  return t;
}

/** A monthly recurring invoice of one 100 USD line to the client, due 3 days after each date. */
function aMonthlyRetainer(t: Tenant, clientId: number, schedule: { start_date: string; auto_send?: boolean }) {
  return t.api.post('/recurring-invoices', {
    client_id: clientId,
    currency: 'USD',
    items: [{ description: 'Retainer', quantity: 1, unit_price: 100 }],
    interval: 'month',
    days_until_due: 3,
    ...schedule,
  });
}

describe('test clocks', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app?.stop());

  test('when a live key reads or advances the test clock, then it gets 403 test_mode_only and nothing moves', async () => {
    // Arrange
    const t = await app.tenant();
    const live = await app.tenant({ mode: 'live', businessId: t.businessId });

    // Act
    const read = await live.api.get('/test-clock');
    const advance = await live.api.post('/test-clock/advance', { to: '2030-01-01' });

    // Assert
    expect(read.status).toBe(403);
    expect(read.body.error).toBe('test_mode_only');
    expect(advance.status).toBe(403);
    expect(advance.body.error).toBe('test_mode_only');
    expect((await t.api.get('/test-clock')).body.test_clock.frozen).toBe(false);
  });

  test('when a test key with any :write scope advances, then it may; a key with only read scopes may read the clock but not advance it', async () => {
    // Arrange
    const writer = await app.tenant({ scopes: ['expenses:write'] });
    const reader = await app.tenant({ scopes: ['clients:read'], businessId: writer.businessId });

    // Act
    const advanced = await writer.api.post('/test-clock/advance', { to: '2030-01-01' });
    const read = await reader.api.get('/test-clock');
    const refused = await reader.api.post('/test-clock/advance', { to: '2030-02-01' });

    // Assert
    expect(advanced.status).toBe(200);
    expect(read.status).toBe(200);
    expect(read.body).toEqual({ test_clock: { now: '2030-01-01T00:00:00.000Z', frozen: true, livemode: false } });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('forbidden');
  });

  test('when a test mode has never been advanced, then its clock reads the real time, not frozen', async () => {
    const t = await app.tenant();

    const res = await t.api.get('/test-clock');

    expect(res.status).toBe(200);
    expect(res.body.test_clock).toMatchObject({ frozen: false, livemode: false });
    expect(isRealTime(res.body.test_clock.now)).toBe(true);
  });

  test('when `to` is a date, then the clock stands at 00:00 UTC of it; a date-time with a zone is that moment', async () => {
    // Arrange
    const t = await app.tenant();

    // Act
    const byDate = await t.api.post('/test-clock/advance', { to: '2030-01-31' });
    const byTime = await t.api.post('/test-clock/advance', { to: '2030-02-01T10:30:00+02:00' });

    // Assert
    expect(byDate.body).toEqual({ test_clock: { now: '2030-01-31T00:00:00.000Z', frozen: true, livemode: false } });
    expect(byTime.body.test_clock.now).toBe('2030-02-01T08:30:00.000Z');
  });

  test.each([
    ['a date that does not exist', { to: '2030-02-30' }, 'must be a real calendar date'],
    ['a date-time without a zone', { to: '2030-02-01T10:30:00' }, 'must be an ISO 8601 date'],
    ['no `to`', {}, 'is required'],
  ])('when `to` is %s, then it is a 422 naming `to`, and the clock does not move', async (_case, body, message) => {
    const t = await app.tenant();

    const res = await t.api.post('/test-clock/advance', body);

    expect(res.status).toBe(422);
    expect(res.body.errors.to.join(' ')).toContain(message);
    expect((await t.api.get('/test-clock')).body.test_clock.frozen).toBe(false);
  });

  test('when `to` is before the clock\'s time, or more than five years after it, then it is a 422 saying so, and the clock stays', async () => {
    // Arrange
    const t = await aStartedBusiness(app);
    const fresh = await app.tenant();

    // Act
    const back = await t.api.post('/test-clock/advance', { to: '2030-03-13' });
    const beforeRealTime = await fresh.api.post('/test-clock/advance', { to: '2020-01-01' });
    const tooFar = await t.api.post('/test-clock/advance', { to: '2035-03-15' });

    // Assert
    expect(back.status).toBe(422);
    expect(back.body.errors.to[0]).toBe(`must not be before the test clock's time, ${START}: a test clock only moves forward`);
    expect(beforeRealTime.status).toBe(422);
    expect(tooFar.status).toBe(422);
    expect(tooFar.body.errors.to[0]).toContain('must be at most 5 years after the test clock\'s time');
    expect((await t.api.get('/test-clock')).body.test_clock.now).toBe(START);
  });

  test('when the clock passes due dates, then each invoice.overdue fires once, in order, dated 00:00 UTC after its due date, before the call returns', async () => {
    // Arrange: the later due date made first, so event order is due-date order, not id order
    const t = await aStartedBusiness(app);
    const later = await aSentInvoice(t, { issue_date: '2030-03-14', due_date: '2030-03-25' });
    const sooner = await aSentInvoice(t, { issue_date: '2030-03-14', due_date: '2030-03-20' });
    const notYet = await aSentInvoice(t, { issue_date: '2030-03-14', due_date: '2030-04-30' });

    // Act
    const res = await t.api.post('/test-clock/advance', { to: '2030-04-01' });

    // Assert
    expect(res.status).toBe(200);
    expect(res.body.test_clock.now).toBe('2030-04-01T00:00:00.000Z');
    const events = await overdueEvents(t);
    expect(events.map((event) => [event.data.invoice.id, event.created_at])).toEqual([
      [sooner.id, '2030-03-21T00:00:00.000Z'],
      [later.id, '2030-03-26T00:00:00.000Z'],
    ]);
    for (const event of events) expect(event.data.invoice).toMatchObject({ overdue: true, status: 'sent' });
    expect((await t.api.get(`/invoices/${sooner.id}`)).body.invoice.overdue).toBe(true);
    expect((await t.api.get(`/invoices/${notYet.id}`)).body.invoice.overdue).toBe(false);

    // And advancing again fires nothing twice
    await t.api.post('/test-clock/advance', { to: '2030-04-02' });
    expect(await overdueEvents(t)).toHaveLength(2);
  });

  test('when a clock is advanced, then what the test mode creates afterwards is dated by it; other businesses and live mode keep the real time', async () => {
    // Arrange
    const t = await aStartedBusiness(app);
    const live = await app.tenant({ mode: 'live', businessId: t.businessId });
    const other = await app.tenant();
    const otherInvoice = await aSentInvoice(other, { issue_date: '2026-01-01', due_date: '2099-12-31' });

    // Act
    await t.api.post('/test-clock/advance', { to: '2030-06-01T12:00:00Z' });
    const client = (await t.api.post('/clients', aClient())).body.client;
    const liveClient = (await live.api.post('/clients', aClient())).body.client;
    const otherClient = (await other.api.post('/clients', aClient())).body.client;

    // Assert
    expect(client.created_at).toBe('2030-06-01T12:00:00.000Z');
    expect(isRealTime(liveClient.created_at)).toBe(true);
    expect(isRealTime(otherClient.created_at)).toBe(true);
    expect((await other.api.get('/test-clock')).body.test_clock.frozen).toBe(false);
    expect((await other.api.get(`/invoices/${otherInvoice.id}`)).body.invoice.overdue).toBe(false);
  });

  test('when an advance passes the due date of another business\'s invoice, or of a live one, then neither fires', async () => {
    // Arrange
    const t = await aStartedBusiness(app);
    const live = await app.tenant({ mode: 'live', businessId: t.businessId });
    const other = await app.tenant();
    await aSentInvoice(live, { issue_date: '2026-11-01', due_date: '2030-03-20' });
    await aSentInvoice(other, { issue_date: '2026-11-01', due_date: '2030-03-20' });

    // Act
    await t.api.post('/test-clock/advance', { to: '2030-04-01' });

    // Assert
    expect(await overdueEvents(live)).toEqual([]);
    expect(await overdueEvents(other)).toEqual([]);
  });

  test('when two advances of one business run at once, then nothing fires twice and the clock ends at the later time', async () => {
    // Arrange
    const t = await aStartedBusiness(app);
    const invoices = await Promise.all(['2030-03-15', '2030-03-20', '2030-04-10'].map((due) => aSentInvoice(t, { issue_date: '2030-03-14', due_date: due })));

    // Act
    const answers = await Promise.all([t.api.post('/test-clock/advance', { to: '2030-05-01' }), t.api.post('/test-clock/advance', { to: '2030-04-15' })]);

    // Assert: the later one wins; the earlier is refused only if it was judged after the later one moved the clock
    expect(answers[0].status).toBe(200);
    expect([200, 422]).toContain(answers[1].status);
    expect((await t.api.get('/test-clock')).body.test_clock.now).toBe('2030-05-01T00:00:00.000Z');
    const fired = (await overdueEvents(t)).map((event) => event.data.invoice.id);
    expect(fired).toEqual(invoices.map((invoice) => invoice.id));
  });

  test('when one advance passes a recurring date and then that invoice\'s due date, then the invoice is issued on its date and becomes overdue the day after its due date, in order', async () => {
    // Arrange: the overdue work has nothing to say when the advance starts; the invoices it fires for are issued on the way
    const t = await aStartedBusiness(app);
    const client = (await t.api.post('/clients', aClient())).body.client;
    const made = await aMonthlyRetainer(t, client.id, { start_date: '2030-03-31', auto_send: false });
    expect(made.status).toBe(201);

    // Act
    const res = await t.api.post('/test-clock/advance', { to: '2030-05-15' });

    // Assert
    expect(res.status).toBe(200);
    const schedule = (await t.api.get(`/recurring-invoices/${made.body.recurring_invoice.id}`)).body.recurring_invoice;
    expect(schedule.next_issue_date).toBe('2030-05-31');
    const invoices = await Promise.all(schedule.invoice_ids.map(async (id: number) => (await t.api.get(`/invoices/${id}`)).body.invoice));
    expect(invoices.map((invoice) => [invoice.issue_date, invoice.created_at, invoice.overdue])).toEqual([
      ['2030-03-31', '2030-03-31T00:00:00.000Z', true],
      ['2030-04-30', '2030-04-30T00:00:00.000Z', true],
    ]);
    const events = (await t.api.get('/events?per_page=100')).body.data as { type: string; created_at: string; data: { invoice: { id: number } } }[];
    expect(events.filter((event) => event.type === 'invoice.created' || event.type === 'invoice.overdue').map((event) => [event.type, event.data.invoice.id, event.created_at])).toEqual([
      ['invoice.created', invoices[0].id, '2030-03-31T00:00:00.000Z'],
      ['invoice.overdue', invoices[0].id, '2030-04-04T00:00:00.000Z'],
      ['invoice.created', invoices[1].id, '2030-04-30T00:00:00.000Z'],
      ['invoice.overdue', invoices[1].id, '2030-05-04T00:00:00.000Z'],
    ]);
  });

  test('when a recurring date cannot be issued on the way, then the advance answers why and the clock stays just before that date, where everything due was done', async () => {
    // Arrange: its e-mail would carry a UBL invoice the business is not ready to make
    const t = await aStartedBusiness(app);
    await app.server.services.businesses.update(t.businessId, { einvoice_format: 'ubl', peppol_id: null });
    const client = (await t.api.post('/clients', aClient())).body.client;
    const made = await aMonthlyRetainer(t, client.id, { start_date: '2030-03-20' });
    expect(made.status).toBe(201);

    // Act
    const res = await t.api.post('/test-clock/advance', { to: '2030-05-01' });

    // Assert
    expect(res.status).toBe(422);
    expect(res.body.error).toBe('einvoice_not_ready');
    expect((await t.api.get('/test-clock')).body.test_clock.now).toBe('2030-03-19T23:59:59.999Z');
    expect((await t.api.get(`/recurring-invoices/${made.body.recurring_invoice.id}`)).body.recurring_invoice).toMatchObject({ next_issue_date: '2030-03-20', invoice_ids: [] });
  });

  test('when an advance repeats under the same Idempotency-Key, then the first answer is replayed', async () => {
    const t = await aStartedBusiness(app);
    const headers = { 'Idempotency-Key': 'advance-once' };

    const first = await t.api.post('/test-clock/advance', { to: '2030-04-01' }, { headers });
    const again = await t.api.post('/test-clock/advance', { to: '2030-04-01' }, { headers });

    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
  });
});

describe('test clocks across server processes', () => {
  // Two servers over one database, as two processes are: on MariaDB only (two SQLite handles of one
  // file cannot write side by side in one Node process; see test/invoices/overdue.test.ts).
  const onMysql = testDriver() === 'mysql' ? test : test.skip;
  let scratch: ScratchDatabase | undefined;
  let first: TestApp;
  let second: TestApp;

  beforeAll(async () => {
    if (testDriver() !== 'mysql') return;
    scratch = await scratchDatabase({ migrated: true });
    first = await startApp({}, { keepDatabase: scratch });
    second = await startApp({}, { keepDatabase: scratch });
  });
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
    await scratch?.drop();
  });

  onMysql('when two processes advance one business at once, then each invoice.overdue fires once and the clock ends at the later time', async () => {
    // Arrange
    const t = await aStartedBusiness(first);
    const otherProcess = new Api(second.url, t.key);
    const invoices = await Promise.all(['2030-03-15', '2030-03-20', '2030-04-10', '2030-04-20'].map((due) => aSentInvoice(t, { issue_date: '2030-03-14', due_date: due })));

    // Act
    const answers = await Promise.all([t.api.post('/test-clock/advance', { to: '2030-05-01' }), otherProcess.post('/test-clock/advance', { to: '2030-04-25' })]);

    // Assert
    expect(answers[0].status).toBe(200);
    expect([200, 422]).toContain(answers[1].status);
    expect((await t.api.get('/test-clock')).body.test_clock.now).toBe('2030-05-01T00:00:00.000Z');
    const fired = await overdueEvents(t);
    expect(fired.map((event) => event.data.invoice.id).sort()).toEqual(invoices.map((invoice) => invoice.id).sort());
    expect(fired.map((event) => event.created_at).sort()).toEqual(['2030-03-16T00:00:00.000Z', '2030-03-21T00:00:00.000Z', '2030-04-11T00:00:00.000Z', '2030-04-21T00:00:00.000Z']);
  });
});

describe('an advance\'s steps', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app?.stop());

  /** A work that records the moments it is run at, and the business clock each run sees. */
  function aRecordingWork(nextDue?: (after: Date) => Date | null) {
    const runs: { at: string; clock: string }[] = [];
    const work: TimeDrivenWork = {
      runDue: (_tenancy, at) => {
        runs.push({ at: at.toISOString(), clock: businessClock.now().toISOString() });
        return Promise.resolve();
      },
      ...(nextDue ? { nextDueAfter: (_tenancy: Tenancy, after: Date) => Promise.resolve(nextDue(after)) } : {}),
    };
    return { work, runs };
  }

  test('when an issuance work cannot say when it is next due, then the advance runs it at every midnight it passes and at `to`, in order, under a clock frozen at each', async () => {
    // Arrange
    const t = await app.tenant();
    await app.server.services.clocks.freezeTestMode(t.businessId, new Date('2030-01-30T15:00:00.000Z'));
    const { work, runs } = aRecordingWork();
    const clocks = new TestClockService(app.db, app.server.services.clocks, { issuance: [work], followUps: app.server.services.followUps });

    // Act
    await clocks.advance(systemActor('cli', { businessId: t.businessId, livemode: false }), { to: new Date('2030-02-02T06:00:00.000Z') });

    // Assert
    const moments = ['2030-01-31T00:00:00.000Z', '2030-02-01T00:00:00.000Z', '2030-02-02T00:00:00.000Z', '2030-02-02T06:00:00.000Z'];
    expect(runs).toEqual(moments.map((at) => ({ at, clock: at })));
  });

  test('when every issuance work says when it is next due, then the advance stops only at those moments and at `to`, and the follow-ups run for everything due before each stop', async () => {
    // Arrange
    const t = await app.tenant();
    await app.server.services.clocks.freezeTestMode(t.businessId, new Date('2030-01-01T00:00:00.000Z'));
    const monthly = ['2030-02-01', '2030-03-01', '2030-04-01'].map((date) => new Date(`${date}T00:00:00.000Z`));
    const { work, runs } = aRecordingWork((after) => monthly.find((at) => at > after) ?? null);
    const followUps = aRecordingWork();
    const clocks = new TestClockService(app.db, app.server.services.clocks, { issuance: [work], followUps: { until: (tenancy) => (at) => followUps.work.runDue(tenancy, at) } });

    // Act
    const moved = await clocks.advance(systemActor('cli', { businessId: t.businessId, livemode: false }), { days: 75 });

    // Assert
    expect(moved.now).toBe('2030-03-17T00:00:00.000Z');
    expect(runs.map((run) => run.at)).toEqual(['2030-02-01T00:00:00.000Z', '2030-03-01T00:00:00.000Z', '2030-03-17T00:00:00.000Z']);
    expect(followUps.runs.map((run) => run.at)).toEqual(['2030-01-31T23:59:59.999Z', '2030-02-28T23:59:59.999Z', '2030-03-16T23:59:59.999Z', '2030-03-17T00:00:00.000Z']);
  });

  test('when an invoice is paid between the stop that found its reminder and the reminder\'s day, then the advance does not send it', async () => {
    // Arrange: reminders on days 1 and 7 of an invoice due 2030-01-10; an issuance work that stops on 01-05 and 01-15, and pays the invoice at 01-15
    const t = await app.tenant();
    await app.server.services.clocks.freezeTestMode(t.businessId, new Date('2030-01-01T00:00:00.000Z'));
    await app.server.services.businesses.update(t.businessId, { reminder_offsets: [1, 7] });
    const client = (await t.api.post('/clients', aClient())).body.client;
    const draft = (await t.api.post('/invoices', anInvoice(client.id, { issue_date: '2030-01-01', due_date: '2030-01-10' }))).body.invoice;
    expect((await t.api.post(`/invoices/${draft.id}/send`)).status).toBe(200);
    const stops = ['2030-01-05', '2030-01-15'].map((date) => new Date(`${date}T00:00:00.000Z`));
    const paying: TimeDrivenWork = {
      runDue: async (_tenancy, at) => {
        if (at.getTime() === stops[1].getTime()) expect((await t.api.post(`/invoices/${draft.id}/simulate-payment`, {})).status).toBe(201);
      },
      nextDueAfter: (_tenancy, after) => Promise.resolve(stops.find((at) => at > after) ?? null),
    };
    const clocks = new TestClockService(app.db, app.server.services.clocks, { issuance: [paying], followUps: app.server.services.followUps });

    // Act
    await clocks.advance(systemActor('cli', { businessId: t.businessId, livemode: false }), { to: new Date('2030-01-20T00:00:00.000Z') });

    // Assert: the day-1 reminder and invoice.overdue (01-11) went out before the payment; the day-7 one (01-17) did not
    const invoice = (await t.api.get(`/invoices/${draft.id}`)).body.invoice;
    expect(invoice).toMatchObject({ status: 'paid', reminders_sent: [{ offset_days: 1, sent_at: '2030-01-11T00:00:00.000Z' }] });
    const events = (await t.api.get('/events?per_page=100')).body.data.filter((event: { type: string }) => ['invoice.reminder_sent', 'invoice.overdue'].includes(event.type));
    expect(events.map((event: { type: string; created_at: string }) => [event.type, event.created_at])).toEqual([
      ['invoice.reminder_sent', '2030-01-11T00:00:00.000Z'],
      ['invoice.overdue', '2030-01-11T00:00:00.000Z'],
    ]);
  });
});
