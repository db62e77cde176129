/**
 * Requests Node's HTTP parser refuses before Express sees them (headers over its 16 KB limit, a
 * malformed request line) still get the contract's error body and the no-sniff, no-store headers.
 */
import { connect } from 'node:net';
import { useApp } from '../support/app';

const ctx = useApp();

/** Writes `request` on a new connection and resolves with everything the server sends back before closing it. */
function rawExchange(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const url = new URL(ctx.app.url);
    const socket = connect(Number(url.port), url.hostname, () => socket.end(request));
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('end', () => resolve(received));
    socket.on('error', reject);
  });
}

function parse(response: string): { status: number; headers: Record<string, string>; body: unknown } {
  const [head, body] = response.split('\r\n\r\n');
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine.split(' ')[1]), headers, body: body ? JSON.parse(body) : undefined };
}

describe('requests the HTTP parser refuses', () => {
  test('when the query string is 20 kB, then the answer is a 431 with the error body', async () => {
    // Act
    const res = await fetch(`${ctx.app.url}/api/v1/clients?q=${'a'.repeat(20_000)}`, { headers: { authorization: `Bearer ${ctx.t.key}` } });

    // Assert
    expect(res.status).toBe(431);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toEqual({ error: 'request_header_fields_too_large', message: expect.stringContaining('16 KB') });
  });

  test('when a header is 20 kB, then the answer is a 431 with the error body, over the raw connection', async () => {
    // Act
    const response = parse(await rawExchange(`GET /api/v1/ping HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`));

    // Assert
    expect(response.status).toBe(431);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.headers['connection']).toBe('close');
    expect(response.body).toEqual({ error: 'request_header_fields_too_large', message: expect.any(String) });
  });

  test('when the request line is malformed, then the answer is a 400 bad_request with the error body', async () => {
    // Act
    const response = parse(await rawExchange('GET /api/v1/ping HTTP/1.1 extra\r\nHost: x\r\n\r\n'));

    // Assert
    expect(response.status).toBe(400);
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.body).toEqual({ error: 'bad_request', message: expect.any(String) });
  });

  test('when a header carries a control character, then the answer is a 400 bad_request and the server goes on answering', async () => {
    // Act
    const response = parse(await rawExchange('GET /api/v1/ping HTTP/1.1\r\nHost: x\r\nX-Bad: a\x01b\r\n\r\n'));
    const after = await fetch(`${ctx.app.url}/api/v1/ping`, { headers: { authorization: `Bearer ${ctx.t.key}` } });

    // Assert
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ error: 'bad_request' });
    expect(after.status).toBe(200);
  });
});

describe('JSON text that is not well-formed Unicode', () => {
  test.each(['{"name":"\\ud800x","email":"lone@example.com"}', '{"name":"ok","email":"lone2@example.com","metadata":{"\\udfff":"v"}}'])(
    'when a string or key of the body holds an unpaired surrogate (%s), then it is a 400 and nothing is stored (MariaDB would store U+FFFD instead)',
    async (body) => {
      // Arrange
      const before = (await ctx.t.api.get('/clients')).body.meta.total;

      // Act
      const res = await fetch(`${ctx.app.url}/api/v1/clients`, { method: 'POST', headers: { authorization: `Bearer ${ctx.t.key}`, 'content-type': 'application/json' }, body });

      // Assert
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: 'bad_request', message: expect.stringContaining('unpaired surrogate') });
      expect((await ctx.t.api.get('/clients')).body.meta.total).toBe(before);
    },
  );
});

describe('large JSON bodies', () => {
  test('when a body under 1 MB holds an array of 400 000 numbers, then it is refused as a validation error, not a 500', async () => {
    const res = await fetch(`${ctx.app.url}/api/v1/clients`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ctx.t.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Big', email: 'big@example.com', metadata: { list: new Array(400_000).fill(1) } }),
    });

    expect(res.status).toBe(422);
  });
});
