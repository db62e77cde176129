/** Tax rates (the contract's "Tax"): made once, renamed or archived, listed, and looked up for invoice lines. */
import { randomUUID } from 'node:crypto';
import { systemActor } from '../../server/auth/actor';
import { UnscopedQuery } from '../../server/db/tenant-model';
import { ValidationFailed } from '../../server/errors';
import { TaxRate } from '../../server/tax-rates/model';
import { Tenant, useApp } from '../support/app';

// This file makes more than the default 120 requests a minute with one key.
const ctx = useApp({ rateLimitPerMinute: 100_000 });

/** A valid tax rate body. */
function aRate(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { display_name: 'VAT', percentage: 19, ...overrides };
}

const idsOf = (res: { body: { data: { id: number }[] } }) => res.body.data.map((r) => r.id);
const withKey = (key: string) => ({ headers: { 'Idempotency-Key': key } });

describe('POST /tax-rates', () => {
  test('when a rate is posted with only a name and a percentage, then it is active, exclusive, category S, and returned under "tax_rate"', async () => {
    // Act
    const res = await ctx.t.api.post('/tax-rates', aRate());

    // Assert
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      tax_rate: {
        id: expect.any(Number),
        display_name: 'VAT',
        percentage: 19,
        inclusive: false,
        category: 'S',
        country: null,
        description: null,
        exemption_reason: null,
        active: true,
        metadata: {},
        livemode: false,
        created_at: expect.any(String),
      },
    });
    expect(new Date(res.body.tax_rate.created_at).toISOString()).toBe(res.body.tax_rate.created_at);
  });

  test('when every field is given, then each is returned as given (the country upper-cased)', async () => {
    const input = aRate({
      display_name: 'MwSt',
      percentage: 7,
      inclusive: true,
      category: 'S',
      country: 'de',
      description: 'Reduced rate: books, food',
      metadata: { ledger: '1776' },
    });

    const res = await ctx.t.api.post('/tax-rates', input);

    expect(res.status).toBe(201);
    expect(res.body.tax_rate).toMatchObject({
      display_name: 'MwSt',
      percentage: 7,
      inclusive: true,
      category: 'S',
      country: 'DE',
      description: 'Reduced rate: books, food',
      exemption_reason: null,
      metadata: { ledger: '1776' },
    });
  });

  test('when the percentage is 0 and no category is given, then the category is Z', async () => {
    const res = await ctx.t.api.post('/tax-rates', aRate({ display_name: 'Zero', percentage: 0 }));

    expect(res.status).toBe(201);
    expect(res.body.tax_rate).toMatchObject({ percentage: 0, category: 'Z', exemption_reason: null });
  });

  test.each([['E'], ['AE'], ['K'], ['G'], ['O']])('when category %s comes at 0 %% with an exemption reason, then it is created with that reason', async (category) => {
    const res = await ctx.t.api.post('/tax-rates', aRate({ percentage: 0, category, exemption_reason: `Reason for ${category}` }));

    expect(res.status).toBe(201);
    expect(res.body.tax_rate).toMatchObject({ percentage: 0, category, exemption_reason: `Reason for ${category}` });
  });

  test('when category Z is given at 0 %, then it is created', async () => {
    const res = await ctx.t.api.post('/tax-rates', aRate({ percentage: 0, category: 'Z' }));

    expect(res.status).toBe(201);
    expect(res.body.tax_rate.category).toBe('Z');
  });

  test.each([
    [8.875, 8.875],
    [0.0001, 0.0001],
    [99.9999, 99.9999],
    [100, 100],
    [12.5, 12.5],
  ])('when the percentage is %s (at most 4 decimals), then it reads back exactly as %s', async (percentage, expected) => {
    const created = await ctx.t.api.post('/tax-rates', aRate({ percentage }));

    const read = await ctx.t.api.get(`/tax-rates/${created.body.tax_rate.id}`);

    expect(created.status).toBe(201);
    expect(read.body.tax_rate.percentage).toBe(expected);
  });

  test('when the percentage is stored, then it is an integer of ten-thousandths of a percent', async () => {
    const created = await ctx.t.api.post('/tax-rates', aRate({ percentage: 8.875 }));

    const row = await ctx.app.db.knex('tax_rates').where('id', created.body.tax_rate.id).first();

    expect(Number(row.percentage_units)).toBe(88_750);
  });

  test.each([
    ['a percentage with 5 decimals', { percentage: 8.87501 }, 'percentage'],
    ['a percentage over 100', { percentage: 100.0001 }, 'percentage'],
    ['a percentage of 150', { percentage: 150 }, 'percentage'],
    ['a negative percentage', { percentage: -1 }, 'percentage'],
    ['a numeric string percentage', { percentage: '19' }, 'percentage'],
    ['no percentage', { percentage: undefined }, 'percentage'],
    ['no display name', { display_name: undefined }, 'display_name'],
    ['a blank display name', { display_name: '   ' }, 'display_name'],
    ['a display name over 100 characters', { display_name: 'n'.repeat(101) }, 'display_name'],
    ['an unknown category', { category: 'X' }, 'category'],
    ['a lower-case category', { category: 's' }, 'category'],
    ['category S at 0 %', { percentage: 0, category: 'S' }, 'category'],
    ['category Z above 0 %', { percentage: 5, category: 'Z' }, 'category'],
    ['category E above 0 %', { percentage: 5, category: 'E', exemption_reason: 'Exempt' }, 'category'],
    ['category AE above 0 %', { percentage: 19, category: 'AE', exemption_reason: 'Reverse charge' }, 'category'],
    ['category E without an exemption reason', { percentage: 0, category: 'E' }, 'exemption_reason'],
    ['category AE with an empty exemption reason', { percentage: 0, category: 'AE', exemption_reason: '' }, 'exemption_reason'],
    ['category K without an exemption reason', { percentage: 0, category: 'K' }, 'exemption_reason'],
    ['category G without an exemption reason', { percentage: 0, category: 'G' }, 'exemption_reason'],
    ['category O without an exemption reason', { percentage: 0, category: 'O' }, 'exemption_reason'],
    ['an exemption reason on a standard rate', { exemption_reason: 'Why?' }, 'exemption_reason'],
    ['an exemption reason on a zero rate', { percentage: 0, exemption_reason: 'Why?' }, 'exemption_reason'],
    ['an unknown country', { country: 'XX' }, 'country'],
    ['a three-letter country', { country: 'DEU' }, 'country'],
    ['inclusive as a string', { inclusive: 'true' }, 'inclusive'],
    ['active on create', { active: false }, 'active'],
    ['a description over 500 characters', { description: 'd'.repeat(501) }, 'description'],
    ['a numeric metadata value', { metadata: { n: 1 } }, 'metadata.n'],
  ])('when posted with %s, then 422 names the field and nothing is created', async (_case, overrides, field) => {
    const before = await ctx.t.api.get('/tax-rates?per_page=1');

    const res = await ctx.t.api.post('/tax-rates', aRate(overrides));

    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error: 'validation_failed', message: expect.any(String) });
    expect(res.body.errors[field]).toEqual([expect.any(String)]);
    expect((await ctx.t.api.get('/tax-rates?per_page=1')).body.meta.total).toBe(before.body.meta.total);
  });

  test('when the category and the exemption reason are both wrong, then one 422 names both', async () => {
    const res = await ctx.t.api.post('/tax-rates', aRate({ percentage: 5, category: 'E' }));

    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors).sort()).toEqual(['category', 'exemption_reason']);
  });

  test('when a POST is retried with the same Idempotency-Key, then the first rate is replayed and no second one is made', async () => {
    // Arrange
    const key = randomUUID();
    const input = aRate({ display_name: 'Replayed' });
    const first = await ctx.t.api.post('/tax-rates', input, withKey(key));
    const count = (await ctx.t.api.get('/tax-rates?per_page=1')).body.meta.total;

    // Act
    const retry = await ctx.t.api.post('/tax-rates', input, withKey(key));

    // Assert
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect((await ctx.t.api.get('/tax-rates?per_page=1')).body.meta.total).toBe(count);
  });
});

describe('GET /tax-rates/{id}', () => {
  test('when a rate is read, then it is the created one', async () => {
    const created = await ctx.t.api.post('/tax-rates', aRate({ display_name: "Zoë's tax; DROP TABLE tax_rates" }));

    const res = await ctx.t.api.get(`/tax-rates/${created.body.tax_rate.id}`);

    expect(res.status).toBe(200);
    expect(res.body).toEqual(created.body);
  });

  test.each(['0', '-1', 'abc', '1.5', '99999999999999999999'])('when the id is %s, then it is a 404', async (id) => {
    const res = await ctx.t.api.get(`/tax-rates/${id}`);

    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not_found', message: 'Tax rate not found' });
  });

  test('when the rate belongs to another business, then read and update are 404 and it is unchanged', async () => {
    // Arrange
    const other = await ctx.app.tenant();
    const theirs = await other.api.post('/tax-rates', aRate());
    const id = theirs.body.tax_rate.id;

    // Act
    const read = await ctx.t.api.get(`/tax-rates/${id}`);
    const patched = await ctx.t.api.patch(`/tax-rates/${id}`, { active: false });

    // Assert
    expect([read.status, patched.status]).toEqual([404, 404]);
    expect((await other.api.get(`/tax-rates/${id}`)).body).toEqual(theirs.body);
  });

  test('when a live key creates a rate, then it is live and the test key of the same business cannot see it', async () => {
    const live = await ctx.app.tenant({ mode: 'live', businessId: ctx.t.businessId });

    const created = await live.api.post('/tax-rates', aRate());
    const fromTest = await ctx.t.api.get(`/tax-rates/${created.body.tax_rate.id}`);

    expect(created.body.tax_rate.livemode).toBe(true);
    expect(fromTest.status).toBe(404);
  });
});

describe('PATCH /tax-rates/{id}', () => {
  test('when the name, description, active and metadata are patched, then only they change', async () => {
    // Arrange
    const created = (await ctx.t.api.post('/tax-rates', aRate({ description: 'old', metadata: { a: '1', b: '2' } }))).body.tax_rate;

    // Act
    const res = await ctx.t.api.patch(`/tax-rates/${created.id}`, { display_name: 'USt', description: '', active: false, metadata: { b: null, c: '3' } });

    // Assert
    expect(res.status).toBe(200);
    expect(res.body.tax_rate).toEqual({ ...created, display_name: 'USt', description: null, active: false, metadata: { a: '1', c: '3' } });
    expect((await ctx.t.api.get(`/tax-rates/${created.id}`)).body.tax_rate).toEqual(res.body.tax_rate);
  });

  test('when an archived rate is patched active again, then it is active', async () => {
    const created = (await ctx.t.api.post('/tax-rates', aRate())).body.tax_rate;
    await ctx.t.api.patch(`/tax-rates/${created.id}`, { active: false });

    const res = await ctx.t.api.patch(`/tax-rates/${created.id}`, { active: true });

    expect(res.status).toBe(200);
    expect(res.body.tax_rate.active).toBe(true);
  });

  test('when the body is empty, then the rate comes back unchanged', async () => {
    const created = (await ctx.t.api.post('/tax-rates', aRate())).body.tax_rate;

    const res = await ctx.t.api.patch(`/tax-rates/${created.id}`, {});

    expect(res.status).toBe(200);
    expect(res.body.tax_rate).toEqual(created);
  });

  test.each([
    ['the percentage', { percentage: 20 }, 'percentage'],
    ['the category', { category: 'Z' }, 'category'],
    ['inclusive', { inclusive: true }, 'inclusive'],
    ['the country', { country: 'FR' }, 'country'],
    ['the exemption reason', { exemption_reason: 'Exempt' }, 'exemption_reason'],
    ['an unknown field', { rate: 20 }, 'rate'],
    ['a blank display name', { display_name: '' }, 'display_name'],
    ['active as a string', { active: 'false' }, 'active'],
  ])('when patched with %s, then 422 names the field and the rate is unchanged', async (_case, changes, field) => {
    // Arrange
    const created = (await ctx.t.api.post('/tax-rates', aRate())).body.tax_rate;

    // Act
    const res = await ctx.t.api.patch(`/tax-rates/${created.id}`, { ...changes, display_name: (changes as { display_name?: string }).display_name ?? 'Renamed' });

    // Assert
    expect(res.status).toBe(422);
    expect(res.body.errors[field]).toEqual([expect.any(String)]);
    expect((await ctx.t.api.get(`/tax-rates/${created.id}`)).body.tax_rate).toEqual(created);
  });

  test('when the percentage is patched, then the message says a rate never changes what it charges', async () => {
    const created = (await ctx.t.api.post('/tax-rates', aRate())).body.tax_rate;

    const res = await ctx.t.api.patch(`/tax-rates/${created.id}`, { percentage: 20 });

    expect(res.body.errors.percentage[0]).toMatch(/^percentage cannot change/);
  });
});

describe('GET /tax-rates', () => {
  let lister: Tenant;
  const active: number[] = [];
  const archived: number[] = [];
  let eu: number;

  beforeAll(async () => {
    lister = await ctx.app.tenant();
    for (let i = 0; i < 3; i += 1) active.push((await lister.api.post('/tax-rates', aRate({ display_name: `Active ${i}` }))).body.tax_rate.id);
    for (let i = 0; i < 2; i += 1) {
      const id = (await lister.api.post('/tax-rates', aRate({ display_name: `Archived ${i}` }))).body.tax_rate.id;
      await lister.api.patch(`/tax-rates/${id}`, { active: false });
      archived.push(id);
    }
    eu = (await lister.api.post('/tax-rates', aRate({ display_name: 'EU', metadata: { region: 'eu', ledger: '1776' } }))).body.tax_rate.id;
    await lister.api.post('/tax-rates', aRate({ display_name: 'US', metadata: { region: 'us' } }));
  });

  test('when listed, then every rate of the business comes in id order with the list meta', async () => {
    const res = await lister.api.get('/tax-rates');

    expect(res.status).toBe(200);
    expect(idsOf(res)).toEqual([...active, ...archived, eu, expect.any(Number)]);
    expect(res.body.meta).toEqual({ current_page: 1, per_page: 20, total: 7, last_page: 1, next_after: null });
  });

  test('when filtered on active=true and active=false, then each lists its own rates', async () => {
    const onlyActive = await lister.api.get('/tax-rates?active=true');
    const onlyArchived = await lister.api.get('/tax-rates?active=false');

    expect(idsOf(onlyActive)).toEqual([...active, eu, expect.any(Number)]);
    expect(idsOf(onlyArchived)).toEqual(archived);
    expect(onlyArchived.body.data.every((r: { active: boolean }) => !r.active)).toBe(true);
  });

  test('when filtered on metadata, then only the rates with every pair come back', async () => {
    const one = await lister.api.get('/tax-rates?metadata[region]=eu');
    const both = await lister.api.get('/tax-rates?metadata[region]=eu&metadata[ledger]=1776');
    const none = await lister.api.get('/tax-rates?metadata[region]=eu&metadata[ledger]=1');
    const withActive = await lister.api.get('/tax-rates?active=false&metadata[region]=eu');

    expect(idsOf(one)).toEqual([eu]);
    expect(idsOf(both)).toEqual([eu]);
    expect(idsOf(none)).toEqual([]);
    expect(idsOf(withActive)).toEqual([]);
  });

  test('when paged with per_page and after, then the pages follow each other', async () => {
    const first = await lister.api.get('/tax-rates?per_page=4');
    const next = await lister.api.get(`/tax-rates?per_page=4&after=${first.body.meta.next_after}`);

    expect(idsOf(first)).toEqual([...active, archived[0]]);
    expect(idsOf(next)).toEqual([archived[1], eu, expect.any(Number)]);
  });

  test.each([['active=yes'], ['active=TRUE'], ['metadata[region]='], ['metadata=eu']])('when the query is %s, then it is a 400', async (query) => {
    const res = await lister.api.get(`/tax-rates?${query}`);

    expect(res.status).toBe(400);
    expect(res.body.error).toBe('bad_request');
  });

  test('when another business lists its rates, then it sees none of these', async () => {
    const other = await ctx.app.tenant();

    const res = await other.api.get('/tax-rates');

    expect(res.body.data).toEqual([]);
  });
});

describe('scopes', () => {
  test('when a key has invoices:read only, then it lists and reads rates but creating or changing one is 403', async () => {
    // Arrange
    const rate = (await ctx.t.api.post('/tax-rates', aRate())).body.tax_rate;
    const reader = await ctx.app.tenant({ businessId: ctx.t.businessId, scopes: ['invoices:read'] });

    // Act
    const listed = await reader.api.get('/tax-rates');
    const read = await reader.api.get(`/tax-rates/${rate.id}`);
    const created = await reader.api.post('/tax-rates', aRate());
    const patched = await reader.api.patch(`/tax-rates/${rate.id}`, { active: false });

    // Assert
    expect([listed.status, read.status]).toEqual([200, 200]);
    for (const res of [created, patched]) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ error: 'forbidden', required_scope: 'invoices:write', key_scopes: ['invoices:read'] });
    }
  });

  test('when a key has neither invoices scope, then even reading is 403', async () => {
    const other = await ctx.app.tenant({ businessId: ctx.t.businessId, scopes: ['clients:write'] });

    const res = await other.api.get('/tax-rates');

    expect(res.status).toBe(403);
    expect(res.body.required_scope).toBe('invoices:read');
  });

  test('when a key has invoices:write, then it may read too', async () => {
    const writer = await ctx.app.tenant({ businessId: ctx.t.businessId, scopes: ['invoices:write'] });

    const created = await writer.api.post('/tax-rates', aRate());
    const read = await writer.api.get(`/tax-rates/${created.body.tax_rate.id}`);

    expect([created.status, read.status]).toEqual([201, 200]);
  });
});

describe('tenancy', () => {
  test('when tax rates are queried without a tenant, then the query throws before reaching the database', async () => {
    await expect(TaxRate.query(ctx.app.db.knex)).rejects.toBeInstanceOf(UnscopedQuery);
  });
});

describe('TaxRateService.termsFor', () => {
  const termsFor = (tenant: Tenant, ids: number[], options: Parameters<typeof ctx.app.server.services.taxRates.termsFor>[3]) =>
    ctx.app.server.services.taxRates.termsFor(systemActor('cli', { businessId: tenant.businessId, livemode: false }), ctx.app.db.knex, ids, options);

  /** The 422 a call ends with, or a failure if it succeeds. */
  async function refusal(call: Promise<unknown>): Promise<ValidationFailed> {
    const err = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ValidationFailed);
    return err as ValidationFailed;
  }

  test('when the ids are the tenant\'s, then each comes back once with its terms, in the order given', async () => {
    // Arrange
    const vat = (await ctx.t.api.post('/tax-rates', aRate({ percentage: 8.875, inclusive: true }))).body.tax_rate;
    const reverse = (await ctx.t.api.post('/tax-rates', aRate({ display_name: 'RC', percentage: 0, category: 'AE', exemption_reason: 'Reverse charge' }))).body.tax_rate;

    // Act
    const terms = await termsFor(ctx.t, [reverse.id, vat.id, reverse.id], { forNewLines: true });

    // Assert
    expect([...terms.keys()]).toEqual([reverse.id, vat.id]);
    expect(terms.get(vat.id)).toEqual({ id: vat.id, display_name: 'VAT', percentage_units: 88_750, inclusive: true, category: 'S', exemption_reason: null });
    expect(terms.get(reverse.id)).toEqual({ id: reverse.id, display_name: 'RC', percentage_units: 0, inclusive: false, category: 'AE', exemption_reason: 'Reverse charge' });
  });

  test('when no ids are given, then the map is empty', async () => {
    expect((await termsFor(ctx.t, [], { forNewLines: true })).size).toBe(0);
  });

  test('when an id is unknown, another business\'s or another mode\'s, then a 422 names each under the fields it came from', async () => {
    // Arrange
    const mine = (await ctx.t.api.post('/tax-rates', aRate())).body.tax_rate.id;
    const otherBusiness = (await (await ctx.app.tenant()).api.post('/tax-rates', aRate())).body.tax_rate.id;
    const liveMode = (await (await ctx.app.tenant({ mode: 'live', businessId: ctx.t.businessId })).api.post('/tax-rates', aRate())).body.tax_rate.id;
    const fields: Record<number, string[]> = { [otherBusiness]: ['items.0.tax_rate_ids'], [liveMode]: ['items.1.tax_rate_ids', 'default_tax_rate_ids'], 999_999: ['items.1.tax_rate_ids'] };

    // Act
    const err = await refusal(termsFor(ctx.t, [mine, otherBusiness, liveMode, 999_999], { forNewLines: false, fieldsOf: (id) => fields[id] ?? [] }));

    // Assert
    expect(err.status).toBe(422);
    expect(err.details).toEqual({
      'items.0.tax_rate_ids': [`does not name a tax rate of this business: ${otherBusiness}`],
      'items.1.tax_rate_ids': [`does not name a tax rate of this business: ${liveMode}, 999999`],
      default_tax_rate_ids: [`does not name a tax rate of this business: ${liveMode}`],
    });
  });

  test('when an archived rate goes on new lines, then a 422 names it; for lines that keep it, its terms come back', async () => {
    // Arrange
    const archived = (await ctx.t.api.post('/tax-rates', aRate())).body.tax_rate.id;
    await ctx.t.api.patch(`/tax-rates/${archived}`, { active: false });

    // Act
    const err = await refusal(termsFor(ctx.t, [archived], { forNewLines: true }));
    const kept = await termsFor(ctx.t, [archived], { forNewLines: false });

    // Assert
    expect(err.details).toEqual({ tax_rate_ids: [`names an archived tax rate (active: false), which new invoice lines cannot take: ${archived}`] });
    expect(kept.get(archived)).toMatchObject({ id: archived, percentage_units: 190_000, category: 'S' });
  });

  test('when both unknown and archived ids come from one field, then that field lists both problems', async () => {
    const archived = (await ctx.t.api.post('/tax-rates', aRate())).body.tax_rate.id;
    await ctx.t.api.patch(`/tax-rates/${archived}`, { active: false });

    const err = await refusal(termsFor(ctx.t, [archived, 999_998], { forNewLines: true, fieldsOf: () => ['default_tax_rate_ids'] }));

    expect(err.details).toEqual({
      default_tax_rate_ids: ['does not name a tax rate of this business: 999998', `names an archived tax rate (active: false), which new invoice lines cannot take: ${archived}`],
    });
  });
});
