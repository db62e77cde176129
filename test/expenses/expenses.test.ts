import { Tenant, useApp } from '../support/app';

// This file makes more than the default 120 requests a minute with one key.
const ctx = useApp({ rateLimitPerMinute: 100_000 });

/** A valid expense body. */
function anExpense(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { amount: 42.5, currency: 'USD', category: 'travel', date: '2026-03-14', ...overrides };
}

const idsOf = (res: { body: { data: { id: number }[] } }) => res.body.data.map((e) => e.id);

describe('POST /expenses', () => {
  test('when a valid expense is posted, then it is created and returned under "expense" with a major-unit amount', async () => {
    const input = anExpense({ amount: 1234.56, description: 'Flight to Lisbon', vendor: 'TAP', notes: 'Conference' });

    const res = await ctx.t.api.post('/expenses', input);

    expect(res.status).toBe(201);
    expect(res.body.expense).toEqual({
      id: expect.any(Number),
      amount: 1234.56,
      currency: 'USD',
      category: 'travel',
      description: 'Flight to Lisbon',
      vendor: 'TAP',
      date: '2026-03-14',
      notes: 'Conference',
      tax_amount: null,
      vendor_tax_id: null,
      document_number: null,
      livemode: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(new Date(res.body.expense.created_at).toISOString()).toBe(res.body.expense.created_at);
  });

  test('when optional fields are absent, then they are null', async () => {
    const res = await ctx.t.api.post('/expenses', anExpense());

    expect(res.body.expense).toMatchObject({ description: null, vendor: null, notes: null });
  });

  test('when no currency is given, then the business currency is used', async () => {
    const yen = await ctx.app.tenant({ currency: 'JPY' });

    const res = await yen.api.post('/expenses', { amount: 1500, category: 'meals', date: '2026-01-02' });

    expect(res.status).toBe(201);
    expect(res.body.expense).toMatchObject({ amount: 1500, currency: 'JPY' });
  });

  test('when the currency is given in lower case, then it is stored upper-cased', async () => {
    const res = await ctx.t.api.post('/expenses', anExpense({ currency: 'eur' }));

    expect(res.body.expense.currency).toBe('EUR');
  });

  test.each([
    ['an amount with three decimals in USD', { amount: 12.345 }, 'amount'],
    ['an amount with decimals in JPY', { amount: 1.5, currency: 'JPY' }, 'amount'],
    ['a zero amount', { amount: 0 }, 'amount'],
    ['a negative amount', { amount: -5 }, 'amount'],
    ['a numeric string amount', { amount: '12.50' }, 'amount'],
    ['an amount past the largest', { amount: 1e13 }, 'amount'],
    ['the amount missing', { amount: undefined }, 'amount'],
    ['an unknown currency', { currency: 'XYZ' }, 'currency'],
    ['a currency that is not three letters', { currency: 'US Dollar' }, 'currency'],
    ['30 February', { date: '2026-02-30' }, 'date'],
    ['29 February of a common year', { date: '2025-02-29' }, 'date'],
    ['month 13', { date: '2026-13-01' }, 'date'],
    ['a timestamp for a date', { date: '2026-03-14T10:00:00Z' }, 'date'],
    ['a day-first date', { date: '14/03/2026' }, 'date'],
    ['the date missing', { date: undefined }, 'date'],
    ['an upper-case category', { category: 'Travel' }, 'category'],
    ['a category with spaces', { category: 'office supplies' }, 'category'],
    ['a category with a trailing dash', { category: 'travel-' }, 'category'],
    ['a category over 64 characters', { category: 'a'.repeat(65) }, 'category'],
    ['the category missing', { category: undefined }, 'category'],
    ['a description over 1000 characters', { description: 'd'.repeat(1001) }, 'description'],
    ['a vendor over 255 characters', { vendor: 'v'.repeat(256) }, 'vendor'],
    ['notes over 5000 characters', { notes: 'n'.repeat(5001) }, 'notes'],
    ['an unknown field', { livemode: true }, 'livemode'],
  ])('when posted with %s, then 422 names the field and nothing is created', async (_case, overrides, field) => {
    const before = await ctx.t.api.get('/expenses?per_page=1');

    const res = await ctx.t.api.post('/expenses', anExpense(overrides));

    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error: 'validation_failed', message: expect.any(String) });
    expect(res.body.errors[field]).toEqual([expect.any(String)]);
    expect((await ctx.t.api.get('/expenses?per_page=1')).body.meta.total).toBe(before.body.meta.total);
  });

  test.each([
    ['29 February of a leap year', '2028-02-29'],
    ['the last day of a 31-day month', '2026-12-31'],
  ])('when the date is %s, then it is accepted', async (_case, date) => {
    const res = await ctx.t.api.post('/expenses', anExpense({ date }));

    expect(res.status).toBe(201);
    expect(res.body.expense.date).toBe(date);
  });

  test.each([
    ['USD', 0.01, 0.01],
    ['KWD', 1.234, 1.234],
    ['JPY', 1200, 1200],
    ['USD', 9_999_999_999.99, 9_999_999_999.99],
  ])('when a %s amount of %s is posted, then it reads back exactly', async (currency, amount, expected) => {
    const created = await ctx.t.api.post('/expenses', anExpense({ currency, amount }));

    const read = await ctx.t.api.get(`/expenses/${created.body.expense.id}`);

    expect(read.body.expense.amount).toBe(expected);
  });
});

describe('GET /expenses/{id}', () => {
  test('when an expense is read, then it is the created one', async () => {
    const created = await ctx.t.api.post('/expenses', anExpense({ vendor: "Zoë's Café; DROP TABLE expenses" }));

    const res = await ctx.t.api.get(`/expenses/${created.body.expense.id}`);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ expense: created.body.expense });
  });

  test.each(['0', '-1', 'abc', '1.5', '99999999999999999999'])('when the id is %s, then it is a 404', async (id) => {
    const res = await ctx.t.api.get(`/expenses/${id}`);

    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not_found', message: expect.any(String) });
  });

  test('when the expense belongs to another business, then read, update and delete are 404 and it is unchanged', async () => {
    const other = await ctx.app.tenant();
    const theirs = await other.api.post('/expenses', anExpense());
    const id = theirs.body.expense.id;

    const read = await ctx.t.api.get(`/expenses/${id}`);
    const patched = await ctx.t.api.patch(`/expenses/${id}`, { amount: 1 });
    const deleted = await ctx.t.api.delete(`/expenses/${id}`);

    expect([read.status, patched.status, deleted.status]).toEqual([404, 404, 404]);
    expect((await other.api.get(`/expenses/${id}`)).body.expense).toEqual(theirs.body.expense);
  });

  test('when a live key asks for a test-mode expense of its own business, then it is a 404', async () => {
    const live = await ctx.app.tenant({ mode: 'live', businessId: ctx.t.businessId });
    const testExpense = await ctx.t.api.post('/expenses', anExpense());

    const res = await live.api.get(`/expenses/${testExpense.body.expense.id}`);

    expect(res.status).toBe(404);
  });

  test('when a live key creates an expense, then it is live and the test key cannot see it', async () => {
    const live = await ctx.app.tenant({ mode: 'live', businessId: ctx.t.businessId });

    const created = await live.api.post('/expenses', anExpense());
    const fromTest = await ctx.t.api.get(`/expenses/${created.body.expense.id}`);

    expect(created.body.expense.livemode).toBe(true);
    expect(fromTest.status).toBe(404);
  });
});

describe('PATCH /expenses/{id}', () => {
  test('when fields are patched, then only they change', async () => {
    const created = await ctx.t.api.post('/expenses', anExpense({ vendor: 'Old', notes: 'keep' }));

    const res = await ctx.t.api.patch(`/expenses/${created.body.expense.id}`, { vendor: 'New', category: 'software', description: null });

    expect(res.status).toBe(200);
    expect(res.body.expense).toEqual({
      ...created.body.expense,
      vendor: 'New',
      category: 'software',
      description: null,
      updated_at: expect.any(String),
    });
  });

  test('when the amount and currency change together, then both are stored', async () => {
    const created = await ctx.t.api.post('/expenses', anExpense({ amount: 10.5 }));

    const res = await ctx.t.api.patch(`/expenses/${created.body.expense.id}`, { amount: 1500, currency: 'JPY' });

    expect(res.status).toBe(200);
    expect(res.body.expense).toMatchObject({ amount: 1500, currency: 'JPY' });
  });

  test('when only the currency changes, then the amount keeps its major units', async () => {
    const created = await ctx.t.api.post('/expenses', anExpense({ amount: 12 }));

    const res = await ctx.t.api.patch(`/expenses/${created.body.expense.id}`, { currency: 'EUR' });

    expect(res.body.expense).toMatchObject({ amount: 12, currency: 'EUR' });
  });

  test('when the currency changes to one the stored amount has too many decimals for, then 422 on amount and nothing changes', async () => {
    const created = await ctx.t.api.post('/expenses', anExpense({ amount: 12.34 }));

    const res = await ctx.t.api.patch(`/expenses/${created.body.expense.id}`, { currency: 'JPY' });

    expect(res.status).toBe(422);
    expect(res.body.errors.amount).toEqual([expect.any(String)]);
    expect((await ctx.t.api.get(`/expenses/${created.body.expense.id}`)).body.expense).toEqual(created.body.expense);
  });

  test('when the amount is patched with more decimals than the stored currency allows, then 422', async () => {
    const created = await ctx.t.api.post('/expenses', anExpense({ currency: 'JPY', amount: 100 }));

    const res = await ctx.t.api.patch(`/expenses/${created.body.expense.id}`, { amount: 100.5 });

    expect(res.status).toBe(422);
    expect(res.body.errors.amount).toEqual([expect.any(String)]);
  });

  test.each([
    ['a null amount', { amount: null }, 'amount'],
    ['a null category', { category: null }, 'category'],
    ['a null date', { date: null }, 'date'],
    ['an impossible date', { date: '2026-04-31' }, 'date'],
    ['an unknown field', { id: 7 }, 'id'],
  ])('when patched with %s, then 422 names the field', async (_case, changes, field) => {
    const created = await ctx.t.api.post('/expenses', anExpense());

    const res = await ctx.t.api.patch(`/expenses/${created.body.expense.id}`, changes);

    expect(res.status).toBe(422);
    expect(res.body.errors[field]).toEqual([expect.any(String)]);
  });
});

describe('DELETE /expenses/{id}', () => {
  test('when an expense is deleted, then it is gone', async () => {
    const created = await ctx.t.api.post('/expenses', anExpense());

    const res = await ctx.t.api.delete(`/expenses/${created.body.expense.id}`);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: created.body.expense.id, deleted: true });
    expect((await ctx.t.api.get(`/expenses/${created.body.expense.id}`)).status).toBe(404);
  });

  test('when an expense is deleted twice, then the second is a 404', async () => {
    const created = await ctx.t.api.post('/expenses', anExpense());
    await ctx.t.api.delete(`/expenses/${created.body.expense.id}`);

    const res = await ctx.t.api.delete(`/expenses/${created.body.expense.id}`);

    expect(res.status).toBe(404);
  });
});

describe('GET /expenses', () => {
  let lister: Tenant;
  const byDate: Record<string, number> = {};
  const travel: number[] = [];
  const all: number[] = [];

  beforeAll(async () => {
    lister = await ctx.app.tenant();
    const dates = ['2026-01-31', '2026-02-01', '2026-02-14', '2026-02-28', '2026-03-01'];
    for (let i = 0; i < 25; i += 1) {
      const date = dates[i % dates.length];
      const category = i % 2 === 0 ? 'travel' : 'office-supplies';
      const res = await lister.api.post('/expenses', anExpense({ date, category, amount: i + 1 }));
      all.push(res.body.expense.id);
      if (category === 'travel') travel.push(res.body.expense.id);
      byDate[res.body.expense.id] = i;
    }
  });

  const datesOf = (res: { body: { data: { date: string }[] } }) => [...new Set(res.body.data.map((e) => e.date))].sort();

  test('when no paging is given, then 20 records come in id order with the envelope', async () => {
    const res = await lister.api.get('/expenses');

    expect(res.status).toBe(200);
    expect(idsOf(res)).toEqual(all.slice(0, 20));
    expect(res.body.meta).toEqual({ current_page: 1, per_page: 20, total: 25, last_page: 2, next_after: expect.any(Number) });
  });

  test('when page 2 is asked with per_page 10, then the second ten come', async () => {
    const res = await lister.api.get('/expenses?page=2&per_page=10');

    expect(idsOf(res)).toEqual(all.slice(10, 20));
    expect(res.body.meta).toEqual({ current_page: 2, per_page: 10, total: 25, last_page: 3, next_after: expect.any(Number) });
  });

  test('when after is an id, then records after it come', async () => {
    const res = await lister.api.get(`/expenses?after=${all[21]}`);

    expect(idsOf(res)).toEqual(all.slice(22));
  });

  test('when filtered by category, then only that category comes', async () => {
    const res = await lister.api.get('/expenses?category=travel&per_page=100');

    expect(idsOf(res)).toEqual(travel);
    expect(res.body.meta.total).toBe(13);
  });

  test('when a category nobody uses is asked, then the list is empty', async () => {
    const res = await lister.api.get('/expenses?category=yachts');

    expect(res.status).toBe(200);
    expect(res.body.meta.total).toBe(0);
  });

  test('when date_from is given, then expenses on that day and later come', async () => {
    const res = await lister.api.get('/expenses?date_from=2026-02-14&per_page=100');

    expect(datesOf(res)).toEqual(['2026-02-14', '2026-02-28', '2026-03-01']);
    expect(res.body.meta.total).toBe(15);
  });

  test('when date_to is given, then expenses up to and including that day come', async () => {
    const res = await lister.api.get('/expenses?date_to=2026-02-01&per_page=100');

    expect(datesOf(res)).toEqual(['2026-01-31', '2026-02-01']);
    expect(res.body.meta.total).toBe(10);
  });

  test('when date_from and date_to are the same day, then that day comes', async () => {
    const res = await lister.api.get('/expenses?date_from=2026-02-28&date_to=2026-02-28');

    expect(datesOf(res)).toEqual(['2026-02-28']);
    expect(res.body.meta.total).toBe(5);
  });

  test('when category and both dates are combined, then every filter applies', async () => {
    const res = await lister.api.get('/expenses?category=travel&date_from=2026-02-01&date_to=2026-02-28&per_page=100');

    expect(datesOf(res)).toEqual(['2026-02-01', '2026-02-14', '2026-02-28']);
    expect(res.body.data.every((e: { category: string }) => e.category === 'travel')).toBe(true);
    expect(idsOf(res)).toEqual(travel.filter((id) => [1, 2, 3].includes(byDate[id] % 5)));
  });

  test.each([
    'category=Travel',
    'category=office%20supplies',
    'category=a&category=b',
    'date_from=2026-02-30',
    'date_from=yesterday',
    'date_to=2026-2-1',
    'date_from=2026-03-01&date_to=2026-02-01',
    'per_page=0',
    'page=x',
  ])('when the query has %s, then it is a 400', async (q) => {
    const res = await lister.api.get(`/expenses?${q}`);

    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'bad_request', message: expect.any(String), errors: expect.any(Object) });
  });

  test('when date_from is after date_to, then the 400 names date_to', async () => {
    const res = await lister.api.get('/expenses?date_from=2026-03-01&date_to=2026-02-01');

    expect(res.body.errors.date_to).toEqual([expect.any(String)]);
  });

  test('when another business lists, then it sees none of these expenses', async () => {
    const other = await ctx.app.tenant();

    const res = await other.api.get('/expenses');

    expect(res.body.meta.total).toBe(0);
  });

  test('when a live key of the same business lists, then it sees none of the test expenses', async () => {
    const live = await ctx.app.tenant({ mode: 'live', businessId: lister.businessId });

    const res = await live.api.get('/expenses');

    expect(res.body.meta.total).toBe(0);
  });
});

describe('scopes', () => {
  test('when a key holds only expenses:read, then it lists and reads but POST, PATCH and DELETE are 403 naming expenses:write', async () => {
    const created = await ctx.t.api.post('/expenses', anExpense());
    const reader = await ctx.app.tenant({ businessId: ctx.t.businessId, scopes: ['expenses:read'] });
    const id = created.body.expense.id;

    const list = await reader.api.get('/expenses');
    const read = await reader.api.get(`/expenses/${id}`);
    const post = await reader.api.post('/expenses', anExpense());
    const patch = await reader.api.patch(`/expenses/${id}`, { amount: 1 });
    const del = await reader.api.delete(`/expenses/${id}`);

    expect([list.status, read.status]).toEqual([200, 200]);
    for (const res of [post, patch, del]) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ error: 'forbidden', required_scope: 'expenses:write', key_scopes: ['expenses:read'] });
    }
  });

  test('when a key holds no expense scope, then the list is 403 naming expenses:read', async () => {
    const other = await ctx.app.tenant({ businessId: ctx.t.businessId, scopes: ['clients:read'] });

    const res = await other.api.get('/expenses');

    expect(res.status).toBe(403);
    expect(res.body.required_scope).toBe('expenses:read');
  });

  test('when the key holds expenses:write only, then it may read too', async () => {
    const writer = await ctx.app.tenant({ businessId: ctx.t.businessId, scopes: ['expenses:write'] });

    const res = await writer.api.get('/expenses');

    expect(res.status).toBe(200);
  });
});

test('expenses are served under /api/v1 too', async () => {
  const res = await ctx.t.api.get('/api/v1/expenses');

  expect(res.status).toBe(200);
});
