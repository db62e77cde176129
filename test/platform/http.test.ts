import pino from 'pino';
import { businessChangesSchema } from '../../server/businesses/schema';
import { validateInput } from '../../server/validation';
import { eventually } from '../support/eventually';
import { aClient, startApp, useApp } from '../support/app';

const ctx = useApp();

describe('paths', () => {
  test('when the same endpoint is called under /api/v1/partner and /api/v1, then both answer alike', async () => {
    const partner = await ctx.t.api.get('/api/v1/partner/ping');
    const short = await ctx.t.api.get('/api/v1/ping');

    expect(partner.status).toBe(200);
    expect(short.body).toEqual(partner.body);
  });

  test('when a client is created under /api/v1, then it is read under /api/v1/partner', async () => {
    const created = await ctx.t.api.post('/api/v1/clients', aClient());

    const read = await ctx.t.api.get(`/api/v1/partner/clients/${created.body.client.id}`);

    expect(read.body.client).toEqual(created.body.client);
  });

  test.each(['/api/v1/partner/nothing', '/api/v1/partner/clients/1/extra', '/elsewhere'])(
    'when %s is requested, then it is a 404 with the error body',
    async (path) => {
      const res = await ctx.t.api.get(path.startsWith('/api/') ? path : `${ctx.app.url}${path}`);

      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not_found', message: expect.any(String) });
    },
  );
});

describe('ping and business', () => {
  test('when pinged, then the business and the key scopes come back', async () => {
    const limited = await ctx.app.tenant({ scopes: ['clients:read'], businessId: ctx.t.businessId });

    const res = await limited.api.get('/ping');

    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      business: { id: ctx.t.businessId, name: 'Test Business', currency: 'USD' },
      scopes: ['clients:read'],
      livemode: false,
    });
  });

  test('when the business is read, then its profile comes back with country and plan, and no legal identity set but its name', async () => {
    const res = await ctx.t.api.get('/business');

    expect(res.body).toEqual({
      business: {
        id: ctx.t.businessId,
        name: 'Test Business',
        currency: 'USD',
        country: 'US',
        plan: 'free',
        legal_name: 'Test Business',
        address_line1: null,
        address_line2: null,
        city: null,
        postal_code: null,
        state: null,
        tax_id: null,
        registration_number: null,
        email: null,
        phone: null,
        iban: null,
        bic: null,
        invoice_footer: null,
        peppol_id: null,
        einvoice_format: null,
        reminder_offsets: [],
      },
    });
  });

  test('when the business has its legal identity set, then GET /business returns every field as stored', async () => {
    // Arrange
    const t = await ctx.app.tenant();
    const identity = {
      legal_name: 'Test Business GmbH',
      address_line1: 'Hauptstraße 1',
      address_line2: 'Hinterhaus',
      city: 'Berlin',
      postal_code: '10115',
      state: 'Berlin',
      country: 'de',
      tax_id: 'DE 123 456 789',
      registration_number: 'HRB 12345 B',
      email: 'billing@business.example',
      phone: '+49 30 1234567',
      iban: 'de89 3704 0044 0532 0130 00',
      bic: 'cobadeffxxx',
      invoice_footer: 'Geschäftsführer: Erika Mustermann',
      peppol_id: '9930:DE123456789',
    };
    await ctx.app.server.services.businesses.update(t.businessId, validateInput(businessChangesSchema, identity));

    // Act
    const res = await t.api.get('/business');

    // Assert
    expect(res.status).toBe(200);
    expect(res.body.business).toEqual({
      id: t.businessId,
      name: 'Test Business',
      currency: 'USD',
      plan: 'free',
      ...identity,
      country: 'DE',
      tax_id: 'DE123456789',
      iban: 'DE89370400440532013000',
      bic: 'COBADEFFXXX',
      einvoice_format: null,
      reminder_offsets: [],
    });
  });

  test('when the legal name is cleared, then GET /business shows the business name in its place', async () => {
    const t = await ctx.app.tenant();
    await ctx.app.server.services.businesses.update(t.businessId, validateInput(businessChangesSchema, { legal_name: 'Formal Name Ltd', city: 'Leeds' }));
    await ctx.app.server.services.businesses.update(t.businessId, validateInput(businessChangesSchema, { legal_name: '', name: 'Renamed' }));

    const res = await t.api.get('/business');

    expect(res.body.business).toMatchObject({ name: 'Renamed', legal_name: 'Renamed', city: 'Leeds' });
  });
});

describe('request bodies', () => {
  test('when the JSON is malformed, then it is a 400 bad_request', async () => {
    const res = await ctx.t.api.post('/clients', undefined, { raw: '{"name": "x",', headers: { 'content-type': 'application/json' } });

    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'bad_request', message: expect.any(String) });
  });

  test('when an unauthenticated request has a malformed body, then it is a 401: bodies are read only for known callers', async () => {
    const res = await ctx.app.api().post('/clients', undefined, { raw: '{oops', headers: { 'content-type': 'application/json' } });

    expect(res.status).toBe(401);
  });

  test('when an authenticated request has a malformed body, then the 400 still carries the rate-limit headers', async () => {
    const res = await ctx.t.api.post('/clients', undefined, { raw: '{oops', headers: { 'content-type': 'application/json' } });

    expect(res.status).toBe(400);
    expect(res.headers.get('x-ratelimit-remaining')).not.toBeNull();
    expect(res.headers.get('retry-after')).not.toBeNull();
  });

  test('when the content type is not JSON, then it is a 400 bad_request', async () => {
    const res = await ctx.t.api.post('/clients', undefined, { raw: 'name=x&email=y@example.com', headers: { 'content-type': 'application/x-www-form-urlencoded' } });

    expect(res.status).toBe(400);
    expect(res.body.error).toBe('bad_request');
  });

  test('when the body is over 1 MB, then it is a 413 and nothing is created', async () => {
    const before = (await ctx.t.api.get('/clients')).body.meta.total;

    const res = await ctx.t.api.post('/clients', aClient({ address: 'x'.repeat(1_100_000) }));

    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: 'payload_too_large', message: expect.any(String) });
    expect((await ctx.t.api.get('/clients')).body.meta.total).toBe(before);
  });

  test('when a response is sent, then it carries a request id', async () => {
    const res = await ctx.t.api.get('/ping');

    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

/** An app of its own whose log lines (JSON text) the test reads, and a tenant of it. */
async function appWithLog() {
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
  const logged = await startApp({}, { logger });
  return { lines, logged, tenant: await logged.tenant() };
}

describe('request logs', () => {
  test('when a request is served, then one JSON line logs it with its request id and never the key', async () => {
    const { lines, logged, tenant } = await appWithLog();

    const res = await tenant.api.get('/clients?search=x', { headers: { 'x-request-id': 'trace-123' } });
    await logged.stop();

    const entries = lines.map((l) => JSON.parse(l));
    expect(res.headers.get('x-request-id')).toBe('trace-123');
    expect(entries).toContainEqual(
      expect.objectContaining({ reqId: 'trace-123', req: expect.objectContaining({ method: 'GET', url: '/api/v1/partner/clients?search=…' }), res: { statusCode: 200 } }),
    );
    expect(lines.join('\n')).not.toContain(tenant.key);
  });
});

describe('request logs of unfinished requests', () => {
  test('when a caller hangs up before the answer, then the request is logged once as aborted, at warn level', async () => {
    const { lines, logged, tenant } = await appWithLog();
    const aborted = () => lines.map((l) => JSON.parse(l) as { msg: string; level: number; req?: { url: string } }).filter((l) => l.msg === 'request aborted');

    const hangUp = new AbortController();
    const poll = fetch(`${logged.url}/api/v1/partner/events?wait=10`, { headers: { authorization: `Bearer ${tenant.key}` }, signal: hangUp.signal }).catch(() => 'hung up');
    await new Promise((resolve) => setTimeout(resolve, 300));
    hangUp.abort();
    await poll;

    await eventually(() => aborted().length === 1, 5000);
    expect(aborted()[0]).toEqual(expect.objectContaining({ level: 40, req: expect.objectContaining({ url: '/api/v1/partner/events?wait=…' }) }));
    await logged.stop();
  });
});

describe('server failures', () => {
  test('when the database is gone, then the answer is a 500 server_error without a stack trace', async () => {
    const broken = await startApp();
    const tenant = await broken.tenant();
    // Renamed rather than dropped: other tables' foreign keys refuse a drop.
    await broken.db.knex.schema.renameTable('clients', 'clients_gone');

    const res = await tenant.api.get('/clients');

    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: 'server_error', message: expect.any(String) });
    expect(res.text).not.toMatch(/at .*\.(ts|js):\d+/);
    expect(res.text).not.toMatch(/clients/);
    await broken.stop();
  });
});
