import { aClient, Tenant, useApp } from '../support/app';

const BASE_URL = 'https://invoices.example.com';
// This file makes more than the default 120 requests a minute with one key.
const ctx = useApp({ baseUrl: BASE_URL, rateLimitPerMinute: 100_000 });

let clientId: number;
beforeAll(async () => {
  clientId = (await ctx.t.api.post('/clients', aClient())).body.client.id;
});

/** A valid contract body for the file's client. */
function aContract(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { title: 'Website redesign', client_id: clientId, body: 'The parties agree that…', ...overrides };
}

const tokenOf = (url: string) => url.match(/\/contracts\/([^/]+)\/(?:sign|embed)$/)?.[1] ?? '';

describe('POST /contracts', () => {
  test('when a valid contract is posted, then it is pending and returned under "contract" with its links', async () => {
    const res = await ctx.t.api.post('/contracts', aContract({ amount: 2500.5, currency: 'EUR' }));

    expect(res.status).toBe(201);
    expect(res.body.contract).toEqual({
      id: expect.any(Number),
      type: 'contract',
      title: 'Website redesign',
      client_id: clientId,
      body: 'The parties agree that…',
      amount: 2500.5,
      currency: 'EUR',
      status: 'pending',
      client_signed_at: null,
      business_signed_at: null,
      signing_url: expect.stringMatching(/^https:\/\/invoices\.example\.com\/contracts\/[A-Za-z0-9_-]+\/sign$/),
      embed_url: expect.stringMatching(/^https:\/\/invoices\.example\.com\/contracts\/[A-Za-z0-9_-]+\/embed$/),
      signatures: [],
      metadata: {},
      livemode: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(tokenOf(res.body.contract.embed_url)).toBe(tokenOf(res.body.contract.signing_url));
  });

  test('when the signing token is decoded, then it holds at least 128 random bits', async () => {
    const res = await ctx.t.api.post('/contracts', aContract());

    const token = tokenOf(res.body.contract.signing_url);

    expect(Buffer.from(token, 'base64url').length).toBeGreaterThanOrEqual(16);
  });

  test('when several contracts are created, then each has its own token', async () => {
    const created = await Promise.all(Array.from({ length: 5 }, () => ctx.t.api.post('/contracts', aContract())));

    const tokens = created.map((r) => tokenOf(r.body.contract.signing_url));

    expect(new Set(tokens).size).toBe(5);
  });

  test('when no amount is given, then amount and currency are null', async () => {
    const res = await ctx.t.api.post('/contracts', aContract());

    expect(res.body.contract).toMatchObject({ amount: null, currency: null });
  });

  test('when an amount is given without a currency, then the business currency is used', async () => {
    const res = await ctx.t.api.post('/contracts', aContract({ amount: 100 }));

    expect(res.body.contract).toMatchObject({ amount: 100, currency: 'USD' });
  });

  test('when the amount is zero, then it is accepted', async () => {
    const res = await ctx.t.api.post('/contracts', aContract({ amount: 0 }));

    expect(res.status).toBe(201);
    expect(res.body.contract.amount).toBe(0);
  });

  test('when type proposal is given, then a proposal is created', async () => {
    const res = await ctx.t.api.post('/contracts', aContract({ type: 'proposal' }));

    expect(res.body.contract.type).toBe('proposal');
  });

  test('when the body is 100 000 characters of multi-byte text, then it is stored whole', async () => {
    const body = 'é✓'.repeat(50_000);

    const created = await ctx.t.api.post('/contracts', aContract({ body }));
    const read = await ctx.t.api.get(`/contracts/${created.body.contract.id}`);

    expect(created.status).toBe(201);
    expect(read.body.contract.body).toBe(body);
  });

  test.each([
    ['the title missing', { title: undefined }, 'title'],
    ['a blank title', { title: '   ' }, 'title'],
    ['a title over 255 characters', { title: 't'.repeat(256) }, 'title'],
    ['the client missing', { client_id: undefined }, 'client_id'],
    ['a client id that is a string', { client_id: '1' }, 'client_id'],
    ['a client id of zero', { client_id: 0 }, 'client_id'],
    ['a client that does not exist', { client_id: 999_999_999 }, 'client_id'],
    ['the body missing', { body: undefined }, 'body'],
    ['a blank body', { body: ' \n ' }, 'body'],
    ['a body over 100 000 characters', { body: 'b'.repeat(100_001) }, 'body'],
    ['an unknown type', { type: 'invoice' }, 'type'],
    ['a negative amount', { amount: -1 }, 'amount'],
    ['a numeric string amount', { amount: '10' }, 'amount'],
    ['three decimals in USD', { amount: 10.005, currency: 'USD' }, 'amount'],
    ['decimals in JPY', { amount: 10.5, currency: 'JPY' }, 'amount'],
    ['an unknown currency', { amount: 10, currency: 'ABC' }, 'currency'],
    ['a status', { status: 'signed' }, 'status'],
    ['an unknown field', { signing_url: 'https://evil.example' }, 'signing_url'],
  ])('when posted with %s, then 422 names the field and nothing is created', async (_case, overrides, field) => {
    const before = await ctx.t.api.get('/contracts?per_page=1');

    const res = await ctx.t.api.post('/contracts', aContract(overrides));

    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error: 'validation_failed', message: expect.any(String) });
    expect(res.body.errors[field]).toEqual([expect.any(String)]);
    expect((await ctx.t.api.get('/contracts?per_page=1')).body.meta.total).toBe(before.body.meta.total);
  });

  test('when the client belongs to another business, then 422 on client_id', async () => {
    const other = await ctx.app.tenant();
    const theirClient = await other.api.post('/clients', aClient());

    const res = await ctx.t.api.post('/contracts', aContract({ client_id: theirClient.body.client.id }));

    expect(res.status).toBe(422);
    expect(res.body.errors.client_id).toEqual([expect.any(String)]);
  });

  test('when the client belongs to the live mode of the same business, then 422 on client_id', async () => {
    const live = await ctx.app.tenant({ mode: 'live', businessId: ctx.t.businessId });
    const liveClient = await live.api.post('/clients', aClient());

    const res = await ctx.t.api.post('/contracts', aContract({ client_id: liveClient.body.client.id }));

    expect(res.status).toBe(422);
    expect(res.body.errors.client_id).toEqual([expect.any(String)]);
  });
});

describe('the contract’s client', () => {
  test('when a client that has a contract is deleted, then 422 invalid_state and both remain', async () => {
    const client = await ctx.t.api.post('/clients', aClient());
    const contract = await ctx.t.api.post('/contracts', aContract({ client_id: client.body.client.id }));

    const res = await ctx.t.api.delete(`/clients/${client.body.client.id}`);

    expect(res.status).toBe(422);
    expect(res.body.error).toBe('invalid_state');
    expect((await ctx.t.api.get(`/clients/${client.body.client.id}`)).status).toBe(200);
    expect((await ctx.t.api.get(`/contracts/${contract.body.contract.id}`)).body.contract.client_id).toBe(client.body.client.id);
  });
});

describe('GET /contracts/{id}', () => {
  test('when a contract is read twice, then its links are the same as at creation', async () => {
    const created = await ctx.t.api.post('/contracts', aContract());

    const first = await ctx.t.api.get(`/contracts/${created.body.contract.id}`);
    const second = await ctx.t.api.get(`/contracts/${created.body.contract.id}`);

    expect(first.status).toBe(200);
    expect(first.body).toEqual({ contract: created.body.contract });
    expect(second.body.contract.signing_url).toBe(created.body.contract.signing_url);
    expect(second.body.contract.embed_url).toBe(created.body.contract.embed_url);
  });

  test.each(['0', 'abc', '1.5', '99999999999999999999'])('when the id is %s, then it is a 404', async (id) => {
    const res = await ctx.t.api.get(`/contracts/${id}`);

    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not_found', message: expect.any(String) });
  });

  test('when the contract belongs to another business, then it is a 404', async () => {
    const other = await ctx.app.tenant();
    const theirClient = await other.api.post('/clients', aClient());
    const theirs = await other.api.post('/contracts', aContract({ client_id: theirClient.body.client.id }));

    const res = await ctx.t.api.get(`/contracts/${theirs.body.contract.id}`);

    expect(theirs.status).toBe(201);
    expect(res.status).toBe(404);
  });

  test('when a live key asks for a test-mode contract of its own business, then it is a 404', async () => {
    const live = await ctx.app.tenant({ mode: 'live', businessId: ctx.t.businessId });
    const testContract = await ctx.t.api.post('/contracts', aContract());

    const res = await live.api.get(`/contracts/${testContract.body.contract.id}`);

    expect(res.status).toBe(404);
  });
});

describe('GET /contracts', () => {
  let lister: Tenant;
  const all: number[] = [];
  const proposals: number[] = [];

  beforeAll(async () => {
    lister = await ctx.app.tenant();
    const client = (await lister.api.post('/clients', aClient())).body.client.id;
    for (let i = 0; i < 23; i += 1) {
      const type = i % 3 === 0 ? 'proposal' : 'contract';
      const res = await lister.api.post('/contracts', aContract({ client_id: client, type, title: `Deal ${i}` }));
      all.push(res.body.contract.id);
      if (type === 'proposal') proposals.push(res.body.contract.id);
    }
  });

  const idsOf = (res: { body: { data: { id: number }[] } }) => res.body.data.map((c) => c.id);

  test('when no paging is given, then contracts and proposals come together, 20 in id order with the envelope', async () => {
    const res = await lister.api.get('/contracts');

    expect(res.status).toBe(200);
    expect(idsOf(res)).toEqual(all.slice(0, 20));
    expect(new Set(res.body.data.map((c: { type: string }) => c.type))).toEqual(new Set(['contract', 'proposal']));
    expect(res.body.meta).toEqual({ current_page: 1, per_page: 20, total: 23, last_page: 2, next_after: expect.any(Number) });
  });

  test('when page 2 is asked, then the rest comes', async () => {
    const res = await lister.api.get('/contracts?page=2');

    expect(idsOf(res)).toEqual(all.slice(20));
  });

  test('when after is an id, then records after it come', async () => {
    const res = await lister.api.get(`/contracts?after=${all[19]}&per_page=2`);

    expect(idsOf(res)).toEqual(all.slice(20, 22));
    expect(res.body.meta).toEqual({ current_page: 1, per_page: 2, total: 3, last_page: 2, next_after: expect.any(Number) });
  });

  test('when filtered by type proposal, then only proposals come', async () => {
    const res = await lister.api.get('/contracts?type=proposal');

    expect(idsOf(res)).toEqual(proposals);
  });

  test('when filtered by type contract, then only contracts come', async () => {
    const res = await lister.api.get('/contracts?type=contract&per_page=100');

    expect(idsOf(res)).toEqual(all.filter((id) => !proposals.includes(id)));
  });

  test('when filtered by status, then only contracts in that status come', async () => {
    const pending = await lister.api.get('/contracts?status=pending');
    const signed = await lister.api.get('/contracts?status=signed');

    expect(pending.body.meta.total).toBe(23);
    expect(signed.body.meta.total).toBe(0);
  });

  test('when filtered by client_id, then only that client\'s contracts come', async () => {
    // Arrange
    const owner = await ctx.app.tenant();
    const [jane, sam] = [(await owner.api.post('/clients', aClient())).body.client.id, (await owner.api.post('/clients', aClient())).body.client.id];
    await owner.api.post('/contracts', aContract({ client_id: jane }));
    const forSam = (await owner.api.post('/contracts', aContract({ client_id: sam }))).body.contract.id;

    // Act
    const res = await owner.api.get(`/contracts?client_id=${sam}`);

    // Assert
    expect(idsOf(res)).toEqual([forSam]);
  });

  test.each(['type=invoice', 'status=paid', 'type=Proposal', 'status=pending&status=signed', 'per_page=0', 'client_id=jane'])(
    'when the query has %s, then it is a 400',
    async (q) => {
      const res = await lister.api.get(`/contracts?${q}`);

      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: 'bad_request', message: expect.any(String) });
    },
  );

  test('when another business lists, then it sees none of these contracts', async () => {
    const other = await ctx.app.tenant();

    const res = await other.api.get('/contracts');

    expect(res.body.meta.total).toBe(0);
  });
});

describe('scopes', () => {
  test('when a key holds only contracts:read, then it reads but POST is 403 naming contracts:write', async () => {
    const reader = await ctx.app.tenant({ businessId: ctx.t.businessId, scopes: ['contracts:read'] });

    const list = await reader.api.get('/contracts');
    const post = await reader.api.post('/contracts', aContract());

    expect(list.status).toBe(200);
    expect(post.status).toBe(403);
    expect(post.body).toMatchObject({ error: 'forbidden', required_scope: 'contracts:write' });
  });

  test('when a key holds no contract scope, then the list is 403 naming contracts:read', async () => {
    const other = await ctx.app.tenant({ businessId: ctx.t.businessId, scopes: ['expenses:write'] });

    const res = await other.api.get('/contracts');

    expect(res.status).toBe(403);
    expect(res.body.required_scope).toBe('contracts:read');
  });
});
