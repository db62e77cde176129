/**
 * `invoicing clock show|advance`: a business's test clock from the command line, through the
 * service the API uses; and `invoicing webhooks listen` shows the events an advance produced.
 */
import { ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { aClient, anInvoice, TEST_APP_SECRET_KEY, Tenant } from '../support/app';
import { BIN, useCliApp } from '../support/cli';
import { eventually } from '../support/eventually';

const ctx = useCliApp();

const START = '2030-03-14T09:00:00.000Z';

async function aSentInvoice(t: Tenant, dates: { issue_date: string; due_date: string }): Promise<any> {
  const client = (await t.api.post('/clients', aClient())).body.client;
  const draft = (await t.api.post('/invoices', anInvoice(client.id, dates))).body.invoice;
  return (await t.api.post(`/invoices/${draft.id}/send`)).body.invoice;
}

describe('invoicing clock', () => {
  test('when the clock is advanced by +30d, then it moves 30 days from the business\'s test time, fires what fell due dated then, and show prints it', async () => {
    // Arrange
    const t = await ctx.app.tenant();
    await t.api.post('/test-clock/advance', { to: START });
    const invoice = await aSentInvoice(t, { issue_date: '2030-03-14', due_date: '2030-03-31' });

    // Act
    const advanced = await ctx.cli('clock', 'advance', '--business', String(t.businessId), '--to', '+30d', '--json');
    const shown = await ctx.cli('clock', 'show', '--business', String(t.businessId));

    // Assert
    expect(advanced.code).toBe(0);
    expect(JSON.parse(advanced.stdout)).toEqual({ test_clock: { now: '2030-04-13T09:00:00.000Z', frozen: true, livemode: false } });
    expect(shown.stdout).toBe(`Business ${t.businessId}'s test clock: 2030-04-13 09:00:00Z\n`);
    const events = (await t.api.get('/events?type=invoice.overdue')).body.data;
    expect(events.map((event: any) => [event.data.invoice.id, event.created_at])).toEqual([[invoice.id, '2030-04-01T00:00:00.000Z']]);
  });

  test('when the clock is advanced to a date, then it stands at 00:00 UTC of it; a test mode never advanced shows the real time', async () => {
    const t = await ctx.app.tenant();

    const before = await ctx.cli('clock', 'show', '--business', String(t.businessId));
    const advanced = await ctx.cli('clock', 'advance', '--business', String(t.businessId), '--to', '2030-01-31');

    expect(before.stdout).toContain('(the real time: it has not been advanced)');
    expect(advanced.code).toBe(0);
    expect(advanced.stdout).toContain(`Business ${t.businessId}'s test clock: 2030-01-31 00:00:00Z`);
    expect((await t.api.get('/test-clock')).body.test_clock.now).toBe('2030-01-31T00:00:00.000Z');
  });

  test.each([
    ['a time before the clock\'s', '2020-01-01', "--to \"2020-01-01\": must not be before the test clock's time"],
    ['a date that does not exist', '2030-02-30', '--to "2030-02-30": must be a real calendar date'],
    ['a relative time that is not days', '+3w', '--to must be a date (2027-01-31), a date-time (2027-01-31T09:00:00Z) or a number of days ahead (+30d)'],
  ])('when --to is %s, then it exits 2 naming --to, and the clock does not move', async (_case, to, message) => {
    const t = await ctx.app.tenant();

    const res = await ctx.cli('clock', 'advance', '--business', String(t.businessId), '--to', to);

    expect(res.code).toBe(2);
    expect(res.stderr).toContain(message);
    expect((await t.api.get('/test-clock')).body.test_clock.frozen).toBe(false);
  });

  test('when the business does not exist, then it exits 1 saying so', async () => {
    const res = await ctx.cli('clock', 'show', '--business', '999999');

    expect(res.code).toBe(1);
    expect(res.stderr).toContain('Business 999999 not found');
  });
});

describe('webhooks listen during an advance', () => {
  let listener: ChildProcessWithoutNullStreams | undefined;
  afterAll(() => listener?.kill('SIGKILL'));

  test('when a test clock is advanced past a due date, then `webhooks listen` prints the invoice.overdue it produced, dated when it was due', async () => {
    // Arrange
    const t = await ctx.app.tenant();
    await t.api.post('/test-clock/advance', { to: START });
    const invoice = await aSentInvoice(t, { issue_date: '2030-03-14', due_date: '2030-03-20' });
    listener = spawn(process.execPath, [BIN, 'webhooks', 'listen', '--print-json', '--business', String(t.businessId), '--api-url', `${ctx.app.url}/api/v1/partner`], {
      env: { PATH: process.env.PATH, DATABASE_URL: ctx.app.databaseUrl, APP_SECRET_KEY: TEST_APP_SECRET_KEY },
    });
    const lines: string[] = [];
    listener.stdout.on('data', (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
    await eventually(() => lines.length >= 2, 15_000);

    // Act
    await t.api.post('/test-clock/advance', { to: '2030-04-01' });

    // Assert
    await eventually(() => lines.some((line) => line.includes('"invoice.overdue"')), 15_000);
    const printed = JSON.parse(lines.find((line) => line.includes('"invoice.overdue"'))!);
    expect(printed).toMatchObject({ type: 'invoice.overdue', created_at: '2030-03-21T00:00:00.000Z', livemode: false, data: { invoice: { id: invoice.id, overdue: true } } });
  });
});
