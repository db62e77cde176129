/** `invoicing recurring create|list|show|pause|resume|cancel`: a business's recurring invoices from the command line, as the real binary. */
import { todayUtc } from '../../server/clock';
import { aClient } from '../support/app';
import { useCliApp } from '../support/cli';

const ctx = useCliApp();

const business = () => String(ctx.t.businessId);
const tenant = () => ['--business', business(), '--mode', 'test'];

async function aClientId(): Promise<string> {
  return String((await ctx.t.api.post('/clients', aClient())).body.client.id);
}

describe('invoicing recurring create', () => {
  test('when a schedule is created with --json, then it prints it as GET /recurring-invoices/{id} shows it', async () => {
    // Arrange
    const client = await aClientId();

    // Act
    const res = await ctx.cli(
      'recurring', 'create', ...tenant(), '--client', client, '--currency', 'usd',
      '--item', 'Retainer: March: 1:800', '--item', 'Hosting:2:10.5', '--interval', 'week', '--every', '2',
      '--start', '2099-01-31', '--end', '2099-12-31', '--days-until-due', '14', '--no-auto-send', '--json',
    );

    // Assert
    expect(res.code).toBe(0);
    const printed = JSON.parse(res.stdout);
    expect(printed).toMatchObject({
      client_id: Number(client),
      currency: 'USD',
      items: [
        { description: 'Retainer: March', quantity: 1, unit_price: 800, tax_rate_ids: null },
        { description: 'Hosting', quantity: 2, unit_price: 10.5, tax_rate_ids: null },
      ],
      interval: 'week',
      interval_count: 2,
      start_date: '2099-01-31',
      end_date: '2099-12-31',
      days_until_due: 14,
      auto_send: false,
      status: 'active',
      next_issue_date: '2099-01-31',
      livemode: false,
    });
    expect((await ctx.t.api.get(`/recurring-invoices/${printed.id}`)).body.recurring_invoice).toEqual(printed);
  });

  test('when created for people, then it says what was made and when the next invoice comes', async () => {
    const client = await aClientId();
    const today = todayUtc();

    const res = await ctx.cli('recurring', 'create', ...tenant(), '--client', client, '--currency', 'USD', '--item', 'Plan:1:25', '--interval', 'month', '--start', today, '--days-until-due', '7');

    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(new RegExp(`^Created test recurring invoice \\d+ for client ${client}: every month from ${today}, due 7 days after each date\\n  1 × Plan at 25\\.00 USD\\nStatus: active; next invoice on ${today}; e-mailed to the client\\nInvoices issued: none yet\\n$`));
  });

  test.each([
    ['no --item', [], 'give at least one --item'],
    ['a malformed --item', ['--item', 'Plan for 25'], '--item must be DESCRIPTION:QUANTITY:UNIT_PRICE'],
    ['a price with too many decimals', ['--item', 'Plan:1:25.001'], '--item'],
    ['an unknown interval', ['--item', 'Plan:1:25', '--interval', 'day'], '--interval "day": must be one of'],
    ['too many months between dates', ['--item', 'Plan:1:25', '--every', '13'], '--every'],
    ['a start in the past', ['--item', 'Plan:1:25', '--start', '2020-01-01'], '--start "2020-01-01": must be today or later'],
    ['an end before the start', ['--item', 'Plan:1:25', '--end', '2098-01-01'], '--end "2098-01-01": must be on or after start_date (2099-01-01)'],
    ['a client of no one', ['--item', 'Plan:1:25', '--client', '999999'], '--client "999999": does not name a client of this business'],
  ])('when given %s, then it exits 2 naming the option and creates nothing', async (_case, args, message) => {
    // Arrange
    const client = await aClientId();
    const before = (await ctx.t.api.get('/recurring-invoices?per_page=1')).body.meta.total;

    // Act
    const res = await ctx.cli('recurring', 'create', ...tenant(), '--client', client, '--currency', 'USD', '--interval', 'month', '--start', '2099-01-01', '--days-until-due', '7', ...args);

    // Assert
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(message);
    expect((await ctx.t.api.get('/recurring-invoices?per_page=1')).body.meta.total).toBe(before);
  });
});

describe('invoicing recurring list, show, pause, resume and cancel', () => {
  test('when a schedule is paused, resumed and cancelled, then each command prints it so and the API agrees', async () => {
    // Arrange
    const client = await aClientId();
    const created = JSON.parse(
      (await ctx.cli('recurring', 'create', ...tenant(), '--client', client, '--currency', 'USD', '--item', 'Plan:1:25', '--interval', 'month', '--start', '2099-03-31', '--days-until-due', '7', '--json')).stdout,
    );
    const id = String(created.id);

    // Act
    const paused = await ctx.cli('recurring', 'pause', id, ...tenant(), '--json');
    const listedPaused = await ctx.cli('recurring', 'list', '--business', business(), '--status', 'paused', '--json');
    const resumed = await ctx.cli('recurring', 'resume', id, ...tenant());
    const shown = await ctx.cli('recurring', 'show', id, ...tenant(), '--json');
    const cancelled = await ctx.cli('recurring', 'cancel', id, ...tenant());
    const again = await ctx.cli('recurring', 'cancel', id, ...tenant());
    const table = await ctx.cli('recurring', 'list', '--business', business(), '--mode', 'test');

    // Assert
    expect(paused.code).toBe(0);
    expect(JSON.parse(paused.stdout)).toMatchObject({ id: created.id, status: 'paused' });
    expect(JSON.parse(listedPaused.stdout)).toEqual({ data: [JSON.parse(paused.stdout)], more: false });
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('Status: active; next invoice on 2099-03-31');
    expect(JSON.parse(shown.stdout)).toMatchObject({ status: 'active', next_issue_date: '2099-03-31' });
    expect(cancelled.code).toBe(0);
    expect(cancelled.stdout).toMatch(/^Cancelled test recurring invoice \d+/);
    expect(cancelled.stdout).toContain('Status: ended;');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('has ended already');
    expect(table.stdout).toMatch(new RegExp(`^ID\\s+MODE\\s+CLIENT\\s+CURRENCY\\s+EVERY\\s+NEXT\\s+STATUS\\s+INVOICES\\s+E-MAIL`));
    expect(table.stdout).toMatch(new RegExp(`\\n${id}\\s+test\\s+${client}\\s+USD\\s+month\\s+-\\s+ended\\s+0\\s+yes`));
    expect((await ctx.t.api.get(`/recurring-invoices/${id}`)).body.recurring_invoice.status).toBe('ended');
  });

  test('when the schedule is of another business, then it is not found and the command exits 1', async () => {
    const other = await ctx.app.tenant();
    const client = String((await other.api.post('/clients', aClient())).body.client.id);
    const theirs = (await other.api.post('/recurring-invoices', { client_id: Number(client), currency: 'USD', items: [{ description: 'Plan', quantity: 1, unit_price: 5 }], interval: 'year', start_date: '2099-01-01', days_until_due: 30 })).body.recurring_invoice;

    const res = await ctx.cli('recurring', 'show', String(theirs.id), ...tenant());

    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`Recurring invoice ${theirs.id} not found`);
  });

  test('when --status is not a status, then it exits 2', async () => {
    const res = await ctx.cli('recurring', 'list', '--business', business(), '--status', 'running');

    expect(res.code).toBe(2);
    expect(res.stderr).toContain('--status must be active, paused or ended');
  });
});
