/**
 * A test clock moves everything time-driven of a test mode at once (contract, "Collections on a
 * clock"): recurring issuance, overdue and reminders run in order at each moment they were due
 * between the old and the new time, and each record and event carries that moment.
 */
import { aClient, startApp, Tenant, TestApp } from '../support/app';
import { runCli } from '../support/cli';

describe('a test clock moving collections', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app?.stop());

  async function aMonthlySchedule(t: Tenant, startDate: string): Promise<any> {
    const client = (await t.api.post('/clients', aClient())).body.client;
    const created = await t.api.post('/recurring-invoices', {
      client_id: client.id,
      currency: 'USD',
      items: [{ description: 'Retainer', quantity: 1, unit_price: 100 }],
      interval: 'month',
      start_date: startDate,
      days_until_due: 10,
    });
    if (created.status !== 201) throw new Error(`could not create the schedule: ${created.status} ${created.text}`);
    return created.body.recurring_invoice;
  }

  test('when the clock is advanced over three month-end dates, then each invoice is issued on its date, reminded on each reminder day, goes overdue the day after its due date, and every event is dated in order', async () => {
    // Arrange
    const t = await app.tenant();
    expect((await t.api.post('/test-clock/advance', { to: '2030-01-30' })).status).toBe(200);
    const reminders = await runCli(app.databaseUrl, ['business', 'update', String(t.businessId), '--reminders', '-3,1,7'], {}, 20_000);
    expect(reminders.code).toBe(0);
    const schedule = await aMonthlySchedule(t, '2030-01-31');

    // Act
    const advanced = await t.api.post('/test-clock/advance', { to: '2030-04-05' });

    // Assert
    expect(advanced.body.test_clock.now).toBe('2030-04-05T00:00:00.000Z');
    const read = (await t.api.get(`/recurring-invoices/${schedule.id}`)).body.recurring_invoice;
    expect(read.next_issue_date).toBe('2030-04-30');
    const invoices = await Promise.all(read.invoice_ids.map(async (id: number) => (await t.api.get(`/invoices/${id}`)).body.invoice));
    expect(invoices.map((invoice) => [invoice.issue_date, invoice.due_date, invoice.created_at, invoice.overdue])).toEqual([
      ['2030-01-31', '2030-02-10', '2030-01-31T00:00:00.000Z', true],
      ['2030-02-28', '2030-03-10', '2030-02-28T00:00:00.000Z', true],
      ['2030-03-31', '2030-04-10', '2030-03-31T00:00:00.000Z', false],
    ]);
    expect(invoices.map((invoice) => invoice.reminders_sent)).toEqual([
      [
        { offset_days: -3, sent_at: '2030-02-07T00:00:00.000Z' },
        { offset_days: 1, sent_at: '2030-02-11T00:00:00.000Z' },
        { offset_days: 7, sent_at: '2030-02-17T00:00:00.000Z' },
      ],
      [
        { offset_days: -3, sent_at: '2030-03-07T00:00:00.000Z' },
        { offset_days: 1, sent_at: '2030-03-11T00:00:00.000Z' },
        { offset_days: 7, sent_at: '2030-03-17T00:00:00.000Z' },
      ],
      [],
    ]);
    const events = (await t.api.get('/events?per_page=100')).body.data.sort((a: any, b: any) => a.id - b.id);
    const overdue = events.filter((event: any) => event.type === 'invoice.overdue');
    expect(overdue.map((event: any) => [event.data.invoice.id, event.created_at])).toEqual([
      [invoices[0].id, '2030-02-11T00:00:00.000Z'],
      [invoices[1].id, '2030-03-11T00:00:00.000Z'],
    ]);
    const reminded = events.filter((event: any) => event.type === 'invoice.reminder_sent');
    expect(reminded.map((event: any) => [event.data.invoice.id, event.data.reminder.offset_days, event.created_at])).toEqual([
      [invoices[0].id, -3, '2030-02-07T00:00:00.000Z'],
      [invoices[0].id, 1, '2030-02-11T00:00:00.000Z'],
      [invoices[0].id, 7, '2030-02-17T00:00:00.000Z'],
      [invoices[1].id, -3, '2030-03-07T00:00:00.000Z'],
      [invoices[1].id, 1, '2030-03-11T00:00:00.000Z'],
      [invoices[1].id, 7, '2030-03-17T00:00:00.000Z'],
    ]);
    const times = events.map((event: any) => event.created_at);
    expect(times).toEqual([...times].sort());
  });
});
