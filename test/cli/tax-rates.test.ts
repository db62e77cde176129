/** `invoicing tax-rates create|list|archive`: a business's tax rates from the command line, as the real binary. */
import { useCliApp } from '../support/cli';

const ctx = useCliApp();

const business = () => String(ctx.t.businessId);

describe('invoicing tax-rates create', () => {
  test('when a rate is created with --json, then it prints the rate as GET /tax-rates/{id} shows it', async () => {
    // Act
    const res = await ctx.cli('tax-rates', 'create', '--business', business(), '--mode', 'test', '--name', 'Sales tax NY', '--percentage', '8.875', '--country', 'us', '--json');

    // Assert
    expect(res.code).toBe(0);
    const printed = JSON.parse(res.stdout);
    expect(printed).toMatchObject({ display_name: 'Sales tax NY', percentage: 8.875, inclusive: false, category: 'S', country: 'US', active: true, livemode: false });
    expect((await ctx.t.api.get(`/tax-rates/${printed.id}`)).body.tax_rate).toEqual(printed);
  });

  test('when an inclusive reverse-charge rate is created for people, then it says what was made', async () => {
    const res = await ctx.cli(
      'tax-rates', 'create', '--business', business(), '--mode', 'live',
      '--name', 'Reverse charge', '--percentage', '0', '--inclusive', '--category', 'ae', '--exemption-reason', 'Reverse charge (Art. 196 VAT Directive)',
    );

    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^Created live tax rate \d+: Reverse charge, 0 % incl\., category AE\nExemption reason: Reverse charge \(Art\. 196 VAT Directive\)\n$/);
  });

  test.each([
    ['a percentage with 5 decimals', ['--percentage', '8.87501'], '--percentage "8.87501": has at most 4 decimals'],
    ['a percentage over 100', ['--percentage', '150'], '--percentage "150": must be less than or equal to 100'],
    ['a percentage that is not a number', ['--percentage', '19%'], '--percentage must be a number from 0 to 100'],
    ['category S at 0 %', ['--percentage', '0', '--category', 'S'], '--category "S": S (standard rate) requires a percentage above 0'],
    ['category E without a reason', ['--percentage', '0', '--category', 'E'], '--exemption-reason: is required for category E'],
    ['an unknown category', ['--percentage', '19', '--category', 'X'], '--category "X": must be one of'],
    ['an unknown country', ['--percentage', '19', '--country', 'XX'], '--country "XX": must be an ISO 3166-1 alpha-2 code'],
    ['an unknown mode', ['--percentage', '19', '--mode', 'sandbox'], '--mode must be test or live'],
    ['no --name', ['--percentage', '19', '--name', ''], 'missing required option: --name'],
  ])('when given %s, then it exits 2 naming the option and creates nothing', async (_case, args, message) => {
    // Arrange
    const before = (await ctx.t.api.get('/tax-rates?per_page=1')).body.meta.total;

    // Act
    const res = await ctx.cli('tax-rates', 'create', '--business', business(), '--mode', 'test', '--name', 'VAT', ...args);

    // Assert
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(message);
    expect((await ctx.t.api.get('/tax-rates?per_page=1')).body.meta.total).toBe(before);
  });

  test('when the business does not exist, then it says so and exits 1', async () => {
    const res = await ctx.cli('tax-rates', 'create', '--business', '999999', '--mode', 'test', '--name', 'VAT', '--percentage', '19');

    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/Business 999999 not found/);
  });
});

describe('invoicing tax-rates list and archive', () => {
  test('when a rate is archived, then it prints it archived, the API shows it so, and list --active and --archived split the rates', async () => {
    // Arrange
    const kept = (await ctx.t.api.post('/tax-rates', { display_name: 'Kept', percentage: 19 })).body.tax_rate;
    const old = (await ctx.t.api.post('/tax-rates', { display_name: 'Old', percentage: 16 })).body.tax_rate;

    // Act
    const archived = await ctx.cli('tax-rates', 'archive', String(old.id), '--business', business(), '--mode', 'test', '--json');
    const active = await ctx.cli('tax-rates', 'list', '--business', business(), '--mode', 'test', '--active', '--json');
    const onlyArchived = await ctx.cli('tax-rates', 'list', '--business', business(), '--archived', '--json');

    // Assert
    expect(archived.code).toBe(0);
    expect(JSON.parse(archived.stdout)).toEqual({ ...old, active: false });
    expect((await ctx.t.api.get(`/tax-rates/${old.id}`)).body.tax_rate.active).toBe(false);
    const activeIds = JSON.parse(active.stdout).data.map((r: { id: number }) => r.id);
    expect(activeIds).toContain(kept.id);
    expect(activeIds).not.toContain(old.id);
    expect(JSON.parse(onlyArchived.stdout)).toEqual({ data: [{ ...old, active: false }], more: false });
  });

  test('when listed for people, then each rate is a row with its mode, name, percentage, category and status', async () => {
    const rate = (await ctx.t.api.post('/tax-rates', { display_name: 'Zero', percentage: 0 })).body.tax_rate;

    const res = await ctx.cli('tax-rates', 'list', '--business', business());

    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/ID\s+MODE\s+NAME\s+PERCENTAGE\s+CATEGORY\s+COUNTRY\s+STATUS/);
    expect(res.stdout).toMatch(new RegExp(`^${rate.id}\\s+test\\s+Zero\\s+0 %\\s+Z\\s+-\\s+active$`, 'm'));
  });

  test('when the rate is another business\'s, then archive says it is not found and changes nothing', async () => {
    const other = await ctx.app.tenant();
    const theirs = (await other.api.post('/tax-rates', { display_name: 'Theirs', percentage: 19 })).body.tax_rate;

    const res = await ctx.cli('tax-rates', 'archive', String(theirs.id), '--business', business(), '--mode', 'test');

    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(new RegExp(`Tax rate ${theirs.id} not found`));
    expect((await other.api.get(`/tax-rates/${theirs.id}`)).body.tax_rate.active).toBe(true);
  });

  test.each([
    ['list with both --active and --archived', ['list', '--business', '1', '--active', '--archived'], 'give either --active or --archived, not both'],
    ['list without --business', ['list'], 'missing required option: --business'],
    ['archive without --mode', ['archive', '3', '--business', '1'], 'missing required option: --mode'],
    ['archive of a malformed id', ['archive', 'x', '--business', '1', '--mode', 'test'], 'tax rate id must be a positive integer'],
  ])('when %s, then it exits 2', async (_case, args, message) => {
    const res = await ctx.cli('tax-rates', ...args);

    expect(res.code).toBe(2);
    expect(res.stderr).toContain(message);
  });
});
