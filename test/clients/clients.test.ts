import { aClient, Tenant, useApp } from '../support/app';
import { dottedCapitalIEmail } from '../support/emails';

const ctx = useApp();

describe('POST /clients', () => {
  test('when a valid client is posted, then it is created and returned under "client"', async () => {
    const input = aClient({ phone: '+1 555 0100', company: 'Acme', address: '1 Main St' });

    const res = await ctx.t.api.post('/clients', input);

    expect(res.status).toBe(201);
    expect(res.body.client).toMatchObject({ ...input, livemode: false });
    expect(res.body.client.id).toEqual(expect.any(Number));
    expect(new Date(res.body.client.created_at).toISOString()).toBe(res.body.client.created_at);
  });

  test('when optional fields are absent, then they are null', async () => {
    const res = await ctx.t.api.post('/clients', aClient());

    expect(res.body.client).toMatchObject({ phone: null, company: null, address: null });
  });

  test.each([
    ['name missing', { email: 'a@example.com' }, 'name'],
    ['email missing', { name: 'A' }, 'email'],
    ['name of the wrong type', { name: 42, email: 'b@example.com' }, 'name'],
    ['email not an address', { name: 'A', email: 'not-an-email' }, 'email'],
    ['a 10 kB name', { name: 'x'.repeat(10_000), email: 'c@example.com' }, 'name'],
    ['a 10 kB address', { name: 'A', email: 'd@example.com', address: 'y'.repeat(10_000) }, 'address'],
    ['an unknown field', { name: 'A', email: 'e@example.com', livemode: true }, 'livemode'],
    ['an empty name', { name: '   ', email: 'f@example.com' }, 'name'],
    ['a field named like an object property', { name: 'A', email: 'g@example.com', toString: 1 }, 'toString'],
    ['a field named constructor', { name: 'A', email: 'h@example.com', constructor: 'x' }, 'constructor'],
  ])('when posted with %s, then 422 names the field and nothing is created', async (_case, input, field) => {
    const before = await ctx.t.api.get('/clients?per_page=1');

    const res = await ctx.t.api.post('/clients', input);

    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error: 'validation_failed', message: expect.any(String) });
    expect(res.body.errors[field]).toEqual([expect.any(String)]);
    expect((await ctx.t.api.get('/clients?per_page=1')).body.meta.total).toBe(before.body.meta.total);
  });

  test('when the body is a JSON array, then it is a 400', async () => {
    const res = await ctx.t.api.post('/clients', [aClient()]);

    expect(res.status).toBe(400);
    expect(res.body.error).toBe('bad_request');
  });

  test('when names carry unicode and SQL metacharacters, then they are stored exactly', async () => {
    const name = "Zoë 👩‍💻 O'Brien\"; DROP TABLE clients; -- 名前";

    const created = await ctx.t.api.post('/clients', aClient({ name, company: "%_\\'" }));
    const read = await ctx.t.api.get(`/clients/${created.body.client.id}`);

    expect(read.status).toBe(200);
    expect(read.body.client.name).toBe(name);
    expect(read.body.client.company).toBe("%_\\'");
  });

  test('when an e-mail is already used in the business and mode, in any case, then 422 with errors.email', async () => {
    const first = await ctx.t.api.post('/clients', aClient({ email: 'Dup@Example.com' }));

    const second = await ctx.t.api.post('/clients', aClient({ email: 'dup@example.COM' }));

    expect(first.status).toBe(201);
    expect(second.status).toBe(422);
    expect(second.body.errors.email).toEqual([expect.any(String)]);
  });

  test('when ten requests race for one e-mail, then exactly one client is created and none fails with 5xx', async () => {
    const email = `race.${Date.now()}@example.com`;

    const results = await Promise.all(Array.from({ length: 10 }, () => ctx.t.api.post('/clients', aClient({ email }))));

    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status !== 201).every((r) => r.status === 422)).toBe(true);
  });

  test('when the same e-mail is used by another business or the other mode, then it is allowed', async () => {
    const email = `shared.${Date.now()}@example.com`;
    const other = await ctx.app.tenant();
    const live = await ctx.app.tenant({ mode: 'live', businessId: ctx.t.businessId });

    const results = [
      await ctx.t.api.post('/clients', aClient({ email })),
      await other.api.post('/clients', aClient({ email })),
      await live.api.post('/clients', aClient({ email })),
    ];

    expect(results.map((r) => r.status)).toEqual([201, 201, 201]);
    expect(results[2].body.client.livemode).toBe(true);
  });
});

describe('e-mails that grow when lower-cased', () => {
  // İ (U+0130) lower-cases to i̇, two code points: the normalised copy is longer than the address.
  test('when a client is created with a 152-character İ e-mail, then it is stored and found again ignoring case', async () => {
    const t = await ctx.app.tenant();
    const email = dottedCapitalIEmail('COM');

    const created = await t.api.post('/clients', aClient({ email }));
    const again = await t.api.post('/clients', aClient({ email: dottedCapitalIEmail('com') }));

    expect(created.status).toBe(201);
    expect(created.body.client.email).toBe(email);
    expect(again.status).toBe(422);
    expect(again.body.errors.email).toEqual([expect.any(String)]);
  });

  test('when a client is patched to a 152-character İ e-mail, then it is saved', async () => {
    const t = await ctx.app.tenant();
    const created = await t.api.post('/clients', aClient());

    const res = await t.api.patch(`/clients/${created.body.client.id}`, { email: dottedCapitalIEmail('com') });

    expect(res.status).toBe(200);
    expect(res.body.client.email).toBe(dottedCapitalIEmail('com'));
  });
});

describe('GET /clients/{id}', () => {
  test.each(['0', '-1', 'abc', '1.5', '99999999999999999999', '1e3', '%20', '%E0', '01'])(
    'when the id is %s, then it is a 404 with the error body',
    async (id) => {
      const res = await ctx.t.api.get(`/clients/${id}`);

      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not_found', message: expect.any(String) });
    },
  );

  test('when the client belongs to another business, then it is a 404 and it is not changed', async () => {
    const other = await ctx.app.tenant();
    const theirs = await other.api.post('/clients', aClient());
    const id = theirs.body.client.id;

    const read = await ctx.t.api.get(`/clients/${id}`);
    const patched = await ctx.t.api.patch(`/clients/${id}`, { name: 'Hijacked' });
    const deleted = await ctx.t.api.delete(`/clients/${id}`);

    expect([read.status, patched.status, deleted.status]).toEqual([404, 404, 404]);
    expect((await other.api.get(`/clients/${id}`)).body.client.name).toBe(theirs.body.client.name);
  });

  test('when the client belongs to the other mode of the same business, then it is a 404', async () => {
    const live = await ctx.app.tenant({ mode: 'live', businessId: ctx.t.businessId });
    const liveClient = await live.api.post('/clients', aClient());

    const res = await ctx.t.api.get(`/clients/${liveClient.body.client.id}`);

    expect(res.status).toBe(404);
  });
});

describe('PATCH /clients/{id}', () => {
  test('when fields are patched, then only they change', async () => {
    const created = await ctx.t.api.post('/clients', aClient({ company: 'Old Co', phone: '1' }));

    const res = await ctx.t.api.patch(`/clients/${created.body.client.id}`, { company: 'New Co', address: null });

    expect(res.status).toBe(200);
    expect(res.body.client).toMatchObject({
      name: created.body.client.name,
      email: created.body.client.email,
      company: 'New Co',
      phone: '1',
      address: null,
    });
  });

  test('when the e-mail is changed to another client’s, then 422 and the client keeps its own', async () => {
    const a = await ctx.t.api.post('/clients', aClient());
    const b = await ctx.t.api.post('/clients', aClient());

    const res = await ctx.t.api.patch(`/clients/${b.body.client.id}`, { email: a.body.client.email.toUpperCase() });

    expect(res.status).toBe(422);
    expect(res.body.errors.email).toBeDefined();
    expect((await ctx.t.api.get(`/clients/${b.body.client.id}`)).body.client.email).toBe(b.body.client.email);
  });

  test('when a field has the wrong type, then 422 and nothing changes', async () => {
    const a = await ctx.t.api.post('/clients', aClient());

    const res = await ctx.t.api.patch(`/clients/${a.body.client.id}`, { name: ['x'], phone: 5 });

    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors).sort()).toEqual(['name', 'phone']);
    expect((await ctx.t.api.get(`/clients/${a.body.client.id}`)).body.client).toEqual(a.body.client);
  });
});

describe('DELETE /clients/{id}', () => {
  test('when a client is deleted, then it is gone', async () => {
    const a = await ctx.t.api.post('/clients', aClient());

    const res = await ctx.t.api.delete(`/clients/${a.body.client.id}`);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: a.body.client.id, deleted: true });
    expect((await ctx.t.api.get(`/clients/${a.body.client.id}`)).status).toBe(404);
  });
});

describe('GET /clients', () => {
  let lister: Tenant;
  const ids: number[] = [];

  beforeAll(async () => {
    lister = await ctx.app.tenant();
    for (let i = 0; i < 25; i += 1) {
      const res = await lister.api.post('/clients', aClient({ name: `Person ${i}`, company: i % 5 === 0 ? 'Ünïcode GmbH' : 'Plain Ltd' }));
      ids.push(res.body.client.id);
    }
  });

  test('when no paging is given, then 20 records come in id order with the envelope', async () => {
    const res = await lister.api.get('/clients');

    expect(res.status).toBe(200);
    expect(res.body.data.map((c: { id: number }) => c.id)).toEqual(ids.slice(0, 20));
    expect(res.body.meta).toEqual({ current_page: 1, per_page: 20, total: 25, last_page: 2, next_after: expect.any(Number) });
  });

  test('when a client pages on with after=meta.next_after, then it sees every record once, and next_after is null on the last page', async () => {
    const seen: number[] = [];
    let after: number | null = null;
    let pages = 0;
    do {
      const res: any = await lister.api.get(`/clients?per_page=10${after === null ? '' : `&after=${after}`}`);
      seen.push(...res.body.data.map((c: { id: number }) => c.id));
      expect(res.body.meta.next_after).toBe(res.body.meta.next_after === null ? null : seen[seen.length - 1]);
      after = res.body.meta.next_after;
      pages += 1;
    } while (after !== null);

    expect(seen).toEqual(ids);
    expect(pages).toBe(3);
  });

  test('when page 2 is asked, then the rest comes', async () => {
    const res = await lister.api.get('/clients?page=2&per_page=20');

    expect(res.body.data.map((c: { id: number }) => c.id)).toEqual(ids.slice(20));
    expect(res.body.meta.current_page).toBe(2);
  });

  test('when a page past the end is asked, then it is empty with the right total', async () => {
    const res = await lister.api.get('/clients?page=9');

    expect(res.body.data).toEqual([]);
    expect(res.body.meta).toEqual({ current_page: 9, per_page: 20, total: 25, last_page: 2, next_after: null });
  });

  test.each(['1000', '99999999999999999999'])('when per_page is %s, then it is clamped to 100', async (perPage) => {
    const res = await lister.api.get(`/clients?per_page=${perPage}`);

    expect(res.status).toBe(200);
    expect(res.body.meta.per_page).toBe(100);
    expect(res.body.data).toHaveLength(25);
  });

  test.each([
    'per_page=0',
    'per_page=-1',
    'per_page=abc',
    'per_page=2.5',
    'page=0',
    'page=x',
    'page=99999999999999999999',
    'per_page=',
    'after=yesterday',
    'after=%2B275760-09-13T00:00:00Z',
    'page=1&page=2',
    'search=%00',
    'search=a&search=b',
  ])(
    'when the query has %s, then it is a 400',
    async (q) => {
      const res = await lister.api.get(`/clients?${q}`);

      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: 'bad_request', message: expect.any(String) });
    },
  );

  test('when after is an id, then records after it come', async () => {
    const res = await lister.api.get(`/clients?after=${ids[22]}`);

    expect(res.body.data.map((c: { id: number }) => c.id)).toEqual(ids.slice(23));
    expect(res.body.meta.total).toBe(2);
  });

  test('when after is a date, then records created after it come', async () => {
    const future = await lister.api.get('/clients?after=2999-01-01');
    const past = await lister.api.get('/clients?after=2000-01-01T00:00:00Z');

    expect(future.body.meta.total).toBe(0);
    expect(past.body.meta.total).toBe(25);
  });

  test('when searching, then name, e-mail and company match case-insensitively as substrings', async () => {
    const byName = await lister.api.get('/clients?search=PERSON%201');
    const byCompany = await lister.api.get(`/clients?search=${encodeURIComponent('üNÏCODE')}`);
    const byEmail = await lister.api.get('/clients?search=EXAMPLE.COM');

    expect(byName.body.data.map((c: { name: string }) => c.name).sort()).toEqual(
      ['Person 1', ...Array.from({ length: 10 }, (_, i) => `Person 1${i}`)].sort(),
    );
    expect(byCompany.body.meta.total).toBe(5);
    expect(byEmail.body.meta.total).toBe(25);
  });

  test('when the search holds LIKE and SQL metacharacters, then they match literally', async () => {
    const percent = await lister.api.get('/clients?search=%25');
    const underscore = await lister.api.get('/clients?search=_');
    const quote = await lister.api.get(`/clients?search=${encodeURIComponent("' OR 1=1 --")}`);

    expect([percent.status, underscore.status, quote.status]).toEqual([200, 200, 200]);
    expect(percent.body.meta.total).toBe(0);
    expect(underscore.body.meta.total).toBe(0);
    expect(quote.body.meta.total).toBe(0);
  });

  test('when another business lists, then it sees none of these clients', async () => {
    const other = await ctx.app.tenant();

    const res = await other.api.get('/clients');

    expect(res.body.meta.total).toBe(0);
  });
});

describe('the client\'s legal identity', () => {
  /** A tenant of its own for each test, so that these many requests stay under the key's rate limit. */
  const fresh = () => ctx.app.tenant();
  const identity = {
    address: 'Hauptstraße 1\nHinterhaus',
    city: 'Berlin',
    postal_code: '10115',
    state: 'Berlin',
    country: 'DE',
    tax_id: 'DE123456789',
    tax_exempt: 'reverse',
    buyer_reference: '04011000-12345-34',
    peppol_id: '0204:04011000-12345-34',
  };

  test('when a client is created with its legal identity, then every field is stored and read back', async () => {
    // Arrange
    const { api } = await fresh();
    const input = aClient(identity);

    // Act
    const created = await api.post('/clients', input);
    const read = await api.get(`/clients/${created.body.client.id}`);
    const listed = await api.get(`/clients?search=${encodeURIComponent(input.email as string)}`);

    // Assert
    expect(created.status).toBe(201);
    expect(created.body.client).toMatchObject(identity);
    expect(read.body.client).toEqual(created.body.client);
    expect(listed.body.data).toEqual([created.body.client]);
  });

  test('when a client is created without them, then they are null and tax_exempt is none', async () => {
    const { api } = await fresh();

    const res = await api.post('/clients', aClient());

    expect(res.body.client).toMatchObject({
      city: null,
      postal_code: null,
      state: null,
      country: null,
      tax_id: null,
      tax_exempt: 'none',
      buyer_reference: null,
      peppol_id: null,
    });
  });

  test('when codes are written in lower case and a VAT number with spaces and dots, then they are stored in their compact form', async () => {
    const { api } = await fresh();

    const res = await api.post('/clients', aClient({ country: 'be', tax_id: ' be 0123.456.749 ' }));

    expect(res.status).toBe(201);
    expect(res.body.client).toMatchObject({ country: 'BE', tax_id: 'BE0123456749' });
  });

  test.each([
    ['a Greek VAT number (prefix EL)', 'EL123456789', 'EL123456789'],
    ['a Northern Irish VAT number (prefix XI)', 'xi 123 4567 89', 'XI123456789'],
    ['a French VAT number with letters in its key', 'FRAB123456789', 'FRAB123456789'],
    ['a Dutch VAT number', 'NL123456789B01', 'NL123456789B01'],
    ['an Austrian VAT number', 'ATU12345678', 'ATU12345678'],
    ['a US EIN', ' 12-3456789 ', '12-3456789'],
    ['a British VAT number', 'GB 123 4567 89', 'GB 123 4567 89'],
    ['a Mexican RFC starting with DE, which no German VAT number can', 'DEL800101AB1', 'DEL800101AB1'],
  ])('when the tax_id is %s (%j), then it is accepted and stored as %j', async (_case, taxId, stored) => {
    const { api } = await fresh();

    const res = await api.post('/clients', aClient({ tax_id: taxId }));

    expect(res.status).toBe(201);
    expect(res.body.client.tax_id).toBe(stored);
  });

  test.each([
    ['a country that is not ISO 3166-1', { country: 'ZZ' }, 'country', /ISO 3166-1 alpha-2/],
    ['a country of three letters', { country: 'DEU' }, 'country', /ISO 3166-1 alpha-2/],
    ['a German VAT number of 8 digits', { tax_id: 'DE12345678' }, 'tax_id', /DE VAT number: DE must be followed by 9 digits/],
    ['a Greek VAT number of 8 digits', { tax_id: 'EL12345678' }, 'tax_id', /EL VAT number/],
    ['a Northern Irish VAT number of 7 digits', { tax_id: 'XI1234567' }, 'tax_id', /XI VAT number/],
    ['a Dutch VAT number without its B', { tax_id: 'NL12345678901' }, 'tax_id', /NL VAT number: NL must be followed by 9 digits, B and 2 digits/],
    ['a tax_id of 51 characters', { tax_id: '1'.repeat(51) }, 'tax_id', /50/],
    ['a Peppol ID without its scheme', { peppol_id: 'DE123456789' }, 'peppol_id', /SCHEME:ID/],
    ['a Peppol ID with a 3-digit scheme', { peppol_id: '088:7300010000001' }, 'peppol_id', /4-digit scheme/],
    ['a Peppol ID with nothing after the colon', { peppol_id: '0088:' }, 'peppol_id', /SCHEME:ID/],
    ['an unknown tax_exempt', { tax_exempt: 'zero' }, 'tax_exempt', /none, exempt, reverse/],
    ['a null tax_exempt', { tax_exempt: null }, 'tax_exempt', /./],
  ])('when posted with %s, then 422 names the field and nothing is created', async (_case, fields, field, message) => {
    const { api } = await fresh();
    const before = await api.get('/clients?per_page=1');

    const res = await api.post('/clients', aClient(fields));

    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual([field]);
    expect(res.body.errors[field][0]).toMatch(message);
    expect((await api.get('/clients?per_page=1')).body.meta.total).toBe(before.body.meta.total);
  });

  test.each(['none', 'exempt', 'reverse'])('when tax_exempt is patched to %s, then the client has it and keeps the rest', async (taxExempt) => {
    const { api } = await fresh();
    const created = await api.post('/clients', aClient(identity));

    const res = await api.patch(`/clients/${created.body.client.id}`, { tax_exempt: taxExempt });

    expect(res.status).toBe(200);
    expect(res.body.client).toEqual({ ...created.body.client, tax_exempt: taxExempt, updated_at: expect.any(String) });
  });

  test('when the legal identity is patched with null and empty strings, then those fields are cleared and the others kept', async () => {
    const { api } = await fresh();
    const created = await api.post('/clients', aClient(identity));

    const res = await api.patch(`/clients/${created.body.client.id}`, { city: null, postal_code: '', country: '', tax_id: null, buyer_reference: '', peppol_id: null });

    expect(res.status).toBe(200);
    expect(res.body.client).toMatchObject({
      address: identity.address,
      state: identity.state,
      tax_exempt: identity.tax_exempt,
      city: null,
      postal_code: null,
      country: null,
      tax_id: null,
      buyer_reference: null,
      peppol_id: null,
    });
  });

  test('when a patch carries a bad country and a bad VAT number, then 422 names both and nothing changes', async () => {
    const { api } = await fresh();
    const created = await api.post('/clients', aClient(identity));

    const res = await api.patch(`/clients/${created.body.client.id}`, { country: 'XX', tax_id: 'FR123' });

    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors).sort()).toEqual(['country', 'tax_id']);
    expect((await api.get(`/clients/${created.body.client.id}`)).body.client).toEqual(created.body.client);
  });

  test('when quick-charge creates its client with a legal identity, then the client it returns and stores has it', async () => {
    const { api } = await fresh();
    const client = aClient(identity);

    const res = await api.post('/quick-charge', { amount: 10, client });
    const stored = await api.get(`/clients/${res.body.client?.id}`);

    expect(res.status).toBe(201);
    expect(res.body.client).toMatchObject(identity);
    expect(stored.body.client).toEqual(res.body.client);
  });

  test('when quick-charge is given a client with a bad VAT number, then 422 names client.tax_id', async () => {
    const { api } = await fresh();

    const res = await api.post('/quick-charge', { amount: 10, client: aClient({ tax_id: 'ATX1234567' }) });

    expect(res.status).toBe(422);
    expect(res.body.errors['client.tax_id']).toEqual([expect.stringMatching(/AT VAT number: AT must be followed by U and 8 digits/)]);
  });
});
