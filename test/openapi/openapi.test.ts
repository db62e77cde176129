import { spawnSync } from 'node:child_process';
import pino from 'pino';
import { API_PREFIXES, createApp } from '../../server/app';
import { loadConfig } from '../../server/config';
import { HTTP_METHODS, openapiDocument } from '../../server/openapi/document';
import { TEST_APP_SECRET_KEY, useApp } from '../support/app';
import { ApiResponse, OpenApiMismatch, OpenApiValidator } from '../support/http';

const ctx = useApp();

/** What the router stack of the real app serves, as `METHOD /path/{param}` below each API prefix. */
function registeredRoutes(): Map<string, Set<string>> {
  const config = loadConfig({ DATABASE_URL: ctx.app.databaseUrl, LOG_LEVEL: 'silent', APP_SECRET_KEY: TEST_APP_SECRET_KEY });
  const app = createApp({ config, db: ctx.app.db, services: ctx.app.server.services, logger: pino({ level: 'silent' }) });

  interface Layer {
    rawPath?: unknown;
    route?: { path: unknown; methods: Record<string, boolean> };
    handle: { stack?: Layer[] };
  }
  // Each route by the API prefix its full path starts with (the longest), or '' outside them.
  const prefixes = [...API_PREFIXES].sort((a, b) => b.length - a.length);
  const byMount = new Map<string, Set<string>>([['', new Set()]]);
  const record = (fullPath: string, methods: Record<string, boolean>) => {
    const mount = prefixes.find((prefix) => fullPath.startsWith(`${prefix}/`)) ?? '';
    const path = fullPath.slice(mount.length).replace(/:(\w+)/g, '{$1}');
    if (!byMount.has(mount)) byMount.set(mount, new Set());
    for (const [method, on] of Object.entries(methods)) {
      if (on && method !== '_all') byMount.get(mount)!.add(`${method.toUpperCase()} ${path}`);
    }
  };
  const walk = (stack: Layer[], at: string) => {
    for (const layer of stack) {
      if (layer.route) {
        const paths: unknown[] = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
        for (const path of paths) {
          expect(typeof path).toBe('string'); // a RegExp route could not be compared
          record(`${at}${String(path)}`, layer.route.methods);
        }
      } else if (layer.handle.stack) {
        walk(layer.handle.stack, typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? `${at}${layer.rawPath}` : at);
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, '');
  return byMount;
}

function documentedRoutes(): Set<string> {
  const routes = new Set<string>();
  for (const [path, item] of Object.entries(openapiDocument.paths)) {
    for (const method of HTTP_METHODS) if (item[method]) routes.add(`${method.toUpperCase()} ${path}`);
  }
  return routes;
}

describe('the served document', () => {
  test.each(['/api/v1/partner/openapi.json', '/api/v1/openapi.json'])('when %s is fetched without a key, then it is the document as JSON', async (path) => {
    const res = await ctx.app.api().get(path);

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-ratelimit-remaining')).toBeNull();
    expect(res.body).toEqual(JSON.parse(JSON.stringify(openapiDocument)));
  });

  test.each(['/api/v1/partner', '/api/v1'])('when the API root %s is fetched, then it is an index whose links answer', async (root) => {
    const res = await ctx.app.api().get(root);

    expect(res.status).toBe(200);
    expect(res.body).toEqual(expect.objectContaining({ version: openapiDocument.info.version, openapi: expect.stringContaining(`${root}/openapi.json`) }));
    const docs = await fetch(new URL(new URL(res.body.docs as string).pathname, ctx.app.url));
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toMatch(/^text\/markdown/);
    expect(await docs.text()).toContain('# API decisions');
    const document = await fetch(new URL(new URL(res.body.openapi as string).pathname, ctx.app.url));
    expect(document.status).toBe(200);
  });

  test('when fetched with a key, then it is served all the same', async () => {
    const res = await ctx.t.api.get('/openapi.json');

    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
  });
});

describe('the document itself', () => {
  test('when checked by @seriousme/openapi-schema-validator, then it is a valid OpenAPI 3.1 document', () => {
    // The validator is ESM-only and Jest runs CommonJS here: it runs in a child Node process.
    const script = [
      "import { Validator } from '@seriousme/openapi-schema-validator';",
      "let input = ''; for await (const chunk of process.stdin) input += chunk;",
      'const validator = new Validator();',
      'const result = await validator.validate(JSON.parse(input));',
      'process.stdout.write(JSON.stringify({ ...result, version: validator.version }));',
    ].join('\n');
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: `${__dirname}/../..`,
      input: JSON.stringify(openapiDocument),
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');

    const result = JSON.parse(run.stdout) as { valid: boolean; errors?: unknown; version: string };

    expect(result.errors).toBeUndefined();
    expect(result).toEqual({ valid: true, version: '3.1' });
  });

  test('when every schema is compiled by Ajv (JSON Schema 2020-12, strict), then none is malformed', () => {
    const validator = new OpenApiValidator(openapiDocument);

    expect(validator.compileAll()).toBeGreaterThan(50);
  });

  test('when its references are followed, then each one resolves', () => {
    const validator = new OpenApiValidator(openapiDocument);
    const refs = JSON.stringify(openapiDocument).match(/"\$ref":"[^"]+"/g) ?? [];

    for (const ref of new Set(refs)) expect(() => validator.resolve({ $ref: JSON.parse(`{${ref}}`).$ref })).not.toThrow();
  });

  test('when the operations are listed, then their ids are unique and every one documents its errors', () => {
    const ids: string[] = [];
    for (const item of Object.values(openapiDocument.paths)) {
      for (const method of HTTP_METHODS) {
        const op = item[method];
        if (!op) continue;
        ids.push(op.operationId);
        const statuses = Object.keys(op.responses);
        if (op.security?.length === 0) continue;
        expect({ op: op.operationId, statuses }).toEqual({ op: op.operationId, statuses: expect.arrayContaining(['400', '401', '404', '429', '500']) });
      }
    }

    expect(new Set(ids).size).toBe(ids.length);
  });

  test('when the webhooks are listed, then every event type of the contract is there', () => {
    expect(Object.keys(openapiDocument.webhooks).sort()).toEqual(
      ['contract.signed', 'credit_note.created', 'invoice.created', 'invoice.overdue', 'invoice.paid', 'invoice.reminder_sent', 'invoice.sent', 'invoice.viewed', 'payment.failed', 'payment.received', 'payment.refunded', 'payment.refund_failed'].sort(),
    );
  });
});

describe('the document and the app', () => {
  test('when the routes of the app are compared with the document, then each route is documented and each documented path is served', () => {
    const mounts = registeredRoutes();

    // Routes outside the prefixes are the client's HTML pages (payment, signing), not the API.
    expect([...mounts.get('')!].filter((route) => / \/api(\/|$)/.test(route))).toEqual([]);
    // Both prefixes serve the same routes.
    expect([...mounts.keys()].filter(Boolean).sort()).toEqual([...API_PREFIXES].sort());
    const [partner, short] = API_PREFIXES.map((prefix) => [...mounts.get(prefix)!].sort());
    expect(short).toEqual(partner);

    expect(partner).toEqual([...documentedRoutes()].sort());
  });
});

describe('the response check of the test client', () => {
  const validator = new OpenApiValidator(openapiDocument);
  const response = (status: number, body: unknown, headers: Record<string, string> = {}): ApiResponse => ({
    status,
    headers: new Headers({ 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'req-1', ...headers }),
    body,
    text: JSON.stringify(body),
    bytes: Buffer.from(JSON.stringify(body)),
  });
  const rate = { 'x-ratelimit-limit': '120', 'x-ratelimit-remaining': '119', 'x-ratelimit-reset': '1790000000', 'retry-after': '60' };
  const url = (path: string) => `http://127.0.0.1:1/api/v1/partner${path}`;
  const ping = { business: { id: 1, name: 'B', currency: 'USD' }, scopes: ['clients:read'], livemode: false };

  test('when a response matches the document, then it passes', () => {
    expect(() => validator.check('GET', url('/ping'), response(200, ping, rate))).not.toThrow();
    expect(() => validator.check('GET', 'http://127.0.0.1:1/api/v1/ping', response(200, ping, rate))).not.toThrow();
  });

  test.each([
    ['an undocumented field', response(200, { ...ping, extra: 1 }, rate), /ping → 200: body does not match the schema: \(root\) must NOT have additional properties/],
    ['a missing field', response(200, { business: ping.business, scopes: [] }, rate), /must have required property 'livemode'/],
    ['a wrong type', response(200, { ...ping, livemode: 'no' }, rate), /\/livemode must be boolean/],
    ['an undocumented status', response(418, { error: 'teapot', message: 'x' }, rate), /status 418 is not documented for ping/],
    ['a missing rate-limit header', response(200, ping, { 'x-ratelimit-limit': '120', 'x-ratelimit-remaining': '1', 'retry-after': '6' }), /required header X-RateLimit-Reset is missing/],
    ['an unknown error code', response(404, { error: 'nope', message: 'x' }, rate), /allowed values/],
    ['a body that is not JSON', { ...response(200, ping, rate), text: '<html>' }, /not JSON/],
  ])('when a response has %s, then the check names method, path, status and the problem', (_case, res, problem) => {
    let error: unknown;
    try {
      validator.check('GET', url('/ping'), res);
    } catch (err) {
      error = err;
    }

    expect(error).toBeInstanceOf(OpenApiMismatch);
    expect((error as Error).message).toMatch(/^OpenAPI mismatch: GET \/api\/v1\/partner\/ping → \d+: /);
    expect((error as Error).message).toMatch(problem);
  });

  test('when no operation matches, then only a 404 with the error body passes', () => {
    expect(() => validator.check('GET', url('/nothing'), response(404, { error: 'not_found', message: 'Route GET /nothing not found' }))).not.toThrow();
    expect(() => validator.check('PUT', url('/clients/1'), response(200, {}))).toThrow(/no documented operation matches PUT \/clients\/1/);
    expect(() => validator.check('GET', url('/nothing'), response(404, { message: 'no code' }))).toThrow(/required property 'error'/);
  });

  test('when a path is outside the API, then it is not checked', () => {
    expect(() => validator.check('GET', 'http://127.0.0.1:1/elsewhere', response(500, 'anything'))).not.toThrow();
  });
});
