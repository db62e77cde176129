/**
 * Access logs never hold the capabilities some URLs carry: payment and signing tokens in paths,
 * OAuth parameters (state, PKCE challenges) and any other values in query strings.
 */
import pino from 'pino';
import { aClient, aDraft, startApp, Tenant, TestApp } from '../support/app';
import { eventually } from '../support/eventually';

let app: TestApp;
let t: Tenant;
const lines: string[] = [];

beforeAll(async () => {
  app = await startApp({}, { logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }) });
  t = await app.tenant();
});
afterAll(() => app?.stop());

function loggedUrls(): string[] {
  return lines.map((line) => JSON.parse(line) as { req?: { url: string } }).flatMap((entry) => (entry.req ? [entry.req.url] : []));
}

describe('request logs', () => {
  test('when payment, signing and OAuth pages are requested, then the log names their routes and holds no token or query value', async () => {
    // Arrange
    const invoice = await aDraft(t);
    const paymentUrl = new URL((await t.api.post(`/invoices/${invoice.id}/initiate-payment`)).body.payment_url as string);
    const client = await t.api.post('/clients', aClient());
    const contract = (await t.api.post('/contracts', { title: 'Build', client_id: client.body.client.id, body: 'Scope.', amount: 10, currency: 'EUR' })).body.contract;
    const signingUrl = new URL(contract.signing_url as string);
    const paymentToken = paymentUrl.pathname.split('/')[2];
    const signingToken = signingUrl.pathname.split('/')[2];
    lines.length = 0;

    // Act
    await fetch(`${app.url}${paymentUrl.pathname}`);
    await fetch(`${app.url}${paymentUrl.pathname}/pdf`);
    await fetch(`${app.url}${paymentUrl.pathname}`, { method: 'POST', body: new URLSearchParams({ form_token: 'x' }) });
    await fetch(`${app.url}${signingUrl.pathname}`);
    await fetch(`${app.url}${paymentUrl.pathname}/no/such/page`);
    await fetch(`${app.url}/oauth/authorize?client_id=app_x&state=secret-state-123&code_challenge=challenge-456&redirect_uri=https%3A%2F%2Fa.example%2Fcb`);
    await t.api.get(`/invoices/${invoice.id}?expand=items`);
    await t.api.get('/clients?search=jane.doe%40example.com');
    await eventually(() => loggedUrls().length >= 8);

    // Assert
    const text = lines.join('\n');
    for (const secret of [paymentToken, signingToken, 'secret-state-123', 'challenge-456', 'jane.doe', 'a.example']) expect(text).not.toContain(secret);
    expect(loggedUrls()).toEqual(
      expect.arrayContaining([
        '/pay/:token',
        '/pay/:token/pdf',
        expect.stringMatching(/^\/contracts\/:token\//),
        '/pay/…',
        '/oauth/authorize?client_id=…&state=…&code_challenge=…&redirect_uri=…',
        `/api/v1/partner/invoices/${invoice.id}?expand=…`,
        '/api/v1/partner/clients?search=…',
      ]),
    );
  });
});
