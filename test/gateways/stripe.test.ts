/** Live payments through a business's Stripe account, with the official SDK against a strict Stripe double. */
import { aDraft, eventsOf } from '../support/app';
import { eventually } from '../support/eventually';
import { useStripeGateway } from '../support/stripe-double';

const gateway = useStripeGateway();
const { stripe } = gateway;
afterEach(() => {
  stripe.holdEvents = false;
  stripe.asyncPayments = false;
  stripe.failWith = null;
});

/** A live invoice's payment page: its path and form token. */
async function openPage(invoiceId: number): Promise<{ path: string; formToken: string; html: string }> {
  const url = (await gateway.live.api.post(`/invoices/${invoiceId}/initiate-payment`)).body.payment_url as string;
  const res = await fetch(url);
  const html = await res.text();
  return { path: url, formToken: /name="form_token" value="([^"]+)"/.exec(html)?.[1] ?? '', html };
}

/** Clicks Pay: the checkout the page sends the browser to. */
async function startCheckout(invoiceId: number): Promise<{ sessionId: string; page: Awaited<ReturnType<typeof openPage>>; answer: Response; html: string }> {
  const page = await openPage(invoiceId);
  const answer = await fetch(page.path, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ form_token: page.formToken }).toString(),
  });
  const html = await answer.text();
  const sessionId = /\/checkout\/(cs_live_[0-9a-f]+)/.exec(html)?.[1] ?? '';
  return { sessionId, page, answer, html };
}

const invoiceOf = async (id: number) => (await gateway.live.api.get(`/invoices/${id}`)).body.invoice;
const typesFor = async (invoiceId: number) =>
  (await eventsOf(gateway.app, gateway.live.businessId)).filter((e) => e.data.invoice?.id === invoiceId && e.type !== 'invoice.viewed').map((e) => e.type);

describe('Pay on a live invoice', () => {
  test('when the client clicks Pay, then a Checkout Session for the amount due is opened with the business\'s key and the browser is sent to it', async () => {
    // Arrange
    const invoice = await aDraft(gateway.live);

    // Act
    const { sessionId, answer, html, page } = await startCheckout(invoice.id);

    // Assert
    expect(page.html).toMatch(/<button type="submit">Pay \$150\.00<\/button>/);
    expect(answer.status).toBe(200);
    expect(html).toContain(`<meta http-equiv="refresh" content="0;url=${stripe.url}/checkout/${sessionId}">`);
    expect(html).toContain('Continue to secure checkout');
    const session = stripe.session(sessionId);
    expect(session).toMatchObject({ amount_total: 15000, currency: 'usd', client_reference_id: String(invoice.id), metadata: { invoice_id: String(invoice.id) } });
    expect(session.success_url).toBe(`${page.path}?checkout_session={CHECKOUT_SESSION_ID}`);
    expect((await invoiceOf(invoice.id)).status).toBe('viewed');
  });

  test('when Pay is clicked again, then the open session for the same amount is reused', async () => {
    const invoice = await aDraft(gateway.live);

    const first = await startCheckout(invoice.id);
    const second = await startCheckout(invoice.id);

    expect(second.sessionId).toBe(first.sessionId);
    expect([...stripe.sessions.values()].filter((s) => s.client_reference_id === String(invoice.id))).toHaveLength(1);
  });

  test('when the gateway is down, then the client gets a page saying nothing was charged, never a 500', async () => {
    stripe.failWith = { status: 500, type: 'api_error', message: 'An unknown error occurred' };
    const invoice = await aDraft(gateway.live);

    const { answer, html } = await startCheckout(invoice.id);

    expect(answer.status).toBe(502);
    expect(html).toContain('Nothing was charged');
    expect((await invoiceOf(invoice.id)).amount_paid).toBe(0);
  });

  test('when the business has no gateway, then the page has no Pay button', async () => {
    const other = await gateway.app.tenant({ mode: 'live' });
    const invoice = await aDraft(other);
    const url = (await other.api.post(`/invoices/${invoice.id}/initiate-payment`)).body.payment_url as string;

    const html = await (await fetch(url)).text();

    expect(html).not.toContain('form_token');
    expect(html).toContain('Online payment is not set up');
  });
});

describe('the gateway confirms', () => {
  test('when Stripe sends checkout.session.completed, then one payment is recorded and the invoice is paid, with its events once', async () => {
    // Arrange
    const invoice = await aDraft(gateway.live);
    const { sessionId } = await startCheckout(invoice.id);

    // Act
    await stripe.complete(sessionId);

    // Assert
    expect(stripe.delivered.at(-1)).toMatchObject({ type: 'checkout.session.completed', status: 200 });
    const read = await invoiceOf(invoice.id);
    expect(read).toMatchObject({ status: 'paid', amount_due: 0 });
    expect(read.payments).toEqual([
      expect.objectContaining({ gateway: 'stripe', method: 'card', gateway_reference: stripe.session(sessionId).payment_intent, amount: 150, livemode: true }),
    ]);
    expect(await typesFor(invoice.id)).toEqual(['invoice.created', 'payment.received', 'invoice.paid']);
  });

  test('when the same event arrives again, and twice at once, then there is still one payment', async () => {
    const invoice = await aDraft(gateway.live);
    const { sessionId } = await startCheckout(invoice.id);
    await stripe.complete(sessionId);

    const statuses = await Promise.all([
      stripe.deliver(sessionId, 'checkout.session.completed'),
      stripe.deliver(sessionId, 'checkout.session.completed'),
      stripe.deliver(sessionId, 'checkout.session.completed'),
    ]);

    expect(statuses).toEqual([200, 200, 200]);
    expect((await invoiceOf(invoice.id)).payments).toHaveLength(1);
    expect((await typesFor(invoice.id)).filter((type) => type === 'payment.received')).toHaveLength(1);
  });

  test('when events race before any was recorded, then one payment is recorded', async () => {
    stripe.holdEvents = true;
    const invoice = await aDraft(gateway.live);
    const { sessionId } = await startCheckout(invoice.id);
    await stripe.complete(sessionId);

    await Promise.all(Array.from({ length: 4 }, () => stripe.deliver(sessionId, 'checkout.session.completed')));

    expect((await invoiceOf(invoice.id)).payments).toHaveLength(1);
  });

  test.each([
    ['signed with another secret', { secret: 'whsec_notTheEndpointSecret0000' }],
    ['replayed long after it was signed', { timestamp: Math.floor(Date.now() / 1000) - 3600 }],
  ])('when an event is %s, then it is a 400 and nothing is recorded', async (_case, options) => {
    stripe.holdEvents = true;
    const invoice = await aDraft(gateway.live);
    const { sessionId } = await startCheckout(invoice.id);
    await stripe.complete(sessionId);

    const status = await stripe.deliver(sessionId, 'checkout.session.completed', options);

    expect(status).toBe(400);
    expect((await invoiceOf(invoice.id)).payments).toHaveLength(0);
  });

  test('when the body is altered after signing, then it is a 400', async () => {
    const payload = JSON.stringify({ id: 'evt_x', type: 'checkout.session.completed', data: { object: { id: 'cs_live_0' } } });
    const header = `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}`;

    const status = await stripe.post(`${gateway.app.url}/gateway/stripe/${gateway.live.businessId}/webhook`, payload, header);

    expect(status).toBe(400);
  });

  test('when a business without a gateway is posted to, then it is a 404', async () => {
    const other = await gateway.app.tenant({ mode: 'live' });

    const status = await stripe.post(`${gateway.app.url}/gateway/stripe/${other.businessId}/webhook`, '{}', 't=1,v1=00');

    expect(status).toBe(404);
  });

  test('when the client returns before the gateway confirms, then the page says it is confirming and nothing is recorded on the return alone', async () => {
    // Arrange: a delayed payment method: the checkout is complete, the money not yet taken
    stripe.asyncPayments = true;
    stripe.holdEvents = true;
    const invoice = await aDraft(gateway.live);
    const { sessionId, page } = await startCheckout(invoice.id);
    await stripe.complete(sessionId);

    // Act
    const returned = await (await fetch(`${page.path}?checkout_session=${sessionId}`)).text();
    const unpaid = await invoiceOf(invoice.id);
    await stripe.settleAsync(sessionId, 'succeeded');
    const after = await (await fetch(`${page.path}?checkout_session=${sessionId}`)).text();

    // Assert
    expect(returned).toContain('Confirming your payment');
    expect(returned).toContain('<meta http-equiv="refresh" content="3">');
    expect(unpaid.amount_paid).toBe(0);
    expect(after).toContain('Paid — thank you');
    expect(after).not.toContain('http-equiv="refresh"');
    expect((await invoiceOf(invoice.id)).payments).toHaveLength(1);
  });

  test('when the webhook never comes, then the return page reads the session from the gateway and records the payment', async () => {
    stripe.holdEvents = true;
    const invoice = await aDraft(gateway.live);
    const { sessionId, page } = await startCheckout(invoice.id);
    await stripe.complete(sessionId);

    const html = await (await fetch(`${page.path}?checkout_session=${sessionId}`)).text();

    expect(html).toContain('Paid — thank you');
    expect((await invoiceOf(invoice.id)).payments).toEqual([expect.objectContaining({ gateway_reference: stripe.session(sessionId).payment_intent })]);
  });

  test('when a delayed payment fails, then payment.failed fires with the invoice and nothing is recorded', async () => {
    stripe.asyncPayments = true;
    stripe.holdEvents = true;
    const invoice = await aDraft(gateway.live);
    const { sessionId } = await startCheckout(invoice.id);
    await stripe.complete(sessionId);

    await stripe.settleAsync(sessionId, 'failed');

    const failed = (await eventsOf(gateway.app, gateway.live.businessId)).filter((e) => e.type === 'payment.failed' && e.data.invoice.id === invoice.id);
    expect(failed).toHaveLength(1);
    expect(failed[0].data.reason).toEqual(expect.any(String));
    expect((await invoiceOf(invoice.id)).payments).toHaveLength(0);
  });

  test('when money arrives for an invoice voided meanwhile, then the payment is recorded and the invoice stays void', async () => {
    // Arrange: the client paid just before the void, and Stripe's event comes after it
    stripe.holdEvents = true;
    const invoice = await aDraft(gateway.live);
    const { sessionId } = await startCheckout(invoice.id);
    await stripe.complete(sessionId);
    await gateway.live.api.post(`/invoices/${invoice.id}/void`);

    await stripe.deliver(sessionId, 'checkout.session.completed');

    const read = await invoiceOf(invoice.id);
    expect(read).toMatchObject({ status: 'void', amount_paid: 0 });
    expect(read.payments).toEqual([expect.objectContaining({ amount: 150, gateway: 'stripe' })]);
  });
});

const sessionRow = async (sessionId: string) => gateway.app.db.knex('checkout_sessions').where({ session_id: sessionId }).first();
const sessionsAtStripeFor = (invoiceId: number) => [...stripe.sessions.values()].filter((s) => s.client_reference_id === String(invoiceId));
const oneLine = (currency: string, unitPrice: number) => ({ currency, items: [{ description: 'Consulting', quantity: 1, unit_price: unitPrice }] });

describe('amounts go to Stripe in Stripe\'s units for the currency', () => {
  test('when a 15 000 ISK invoice is paid, then Stripe is asked for 1500000 (ISK is two-decimal at Stripe) and 15 000 ISK is recorded paid', async () => {
    // Arrange
    const invoice = await aDraft(gateway.live, oneLine('ISK', 15000));

    // Act
    const { sessionId, page } = await startCheckout(invoice.id);
    await stripe.complete(sessionId);

    // Assert
    expect(page.html).toMatch(/<button type="submit">Pay [^<]*15,000[^<]*<\/button>/);
    expect(stripe.session(sessionId)).toMatchObject({ amount_total: 1500000, currency: 'isk' });
    const read = await invoiceOf(invoice.id);
    expect(read).toMatchObject({ status: 'paid', amount_paid: 15000, amount_due: 0 });
    expect(read.payments).toEqual([expect.objectContaining({ amount: 15000, currency: 'ISK' })]);
  });

  test('when an MGA invoice is paid, then Stripe is asked for whole ariary (MGA is zero-decimal at Stripe) and the amount is recorded paid', async () => {
    const invoice = await aDraft(gateway.live, oneLine('MGA', 5000));

    const { sessionId } = await startCheckout(invoice.id);
    await stripe.complete(sessionId);

    expect(stripe.session(sessionId)).toMatchObject({ amount_total: 5000, currency: 'mga' });
    expect(await invoiceOf(invoice.id)).toMatchObject({ status: 'paid', amount_paid: 5000 });
  });

  test('when a KWD amount does not end in 0 (12.345 KWD), then the page offers no Pay button and says online payment is not available for this amount, and a posted Pay opens nothing', async () => {
    // Arrange
    const invoice = await aDraft(gateway.live, oneLine('KWD', 12.345));

    // Act
    const page = await openPage(invoice.id);
    // A Pay posted all the same (a page opened before, a crafted form): with a valid form token.
    const pageToken = new URL(page.path).pathname.split('/').pop()!;
    const answer = await fetch(page.path, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ form_token: gateway.app.server.services.pageForms.token('pay', pageToken) }).toString(),
    });

    // Assert
    expect(page.html).not.toContain('<button type="submit">');
    expect(page.html).toContain('Online payment is not available for this amount');
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe(new URL(page.path).pathname);
    expect(sessionsAtStripeFor(invoice.id)).toHaveLength(0);
  });

  test('when a KWD amount ends in 0 (12.340 KWD), then it is payable: Stripe is asked for 12340 and 12.34 KWD is recorded paid', async () => {
    const invoice = await aDraft(gateway.live, oneLine('KWD', 12.34));

    const { sessionId, page } = await startCheckout(invoice.id);
    await stripe.complete(sessionId);

    expect(page.html).toContain('<button type="submit">');
    expect(stripe.session(sessionId)).toMatchObject({ amount_total: 12340, currency: 'kwd' });
    expect(await invoiceOf(invoice.id)).toMatchObject({ status: 'paid', amount_paid: 12.34 });
  });
});

describe('amounts Stripe will never charge', () => {
  test.each([
    ['below its minimum (0.30 USD)', { items: [{ description: 'Balance', quantity: 1, unit_price: 0.3 }] }],
    ['above its maximum (1 000 000 USD)', { items: [{ description: 'Plant', quantity: 1, unit_price: 1000000 }] }],
  ])('when the amount is %s, then Pay answers a page saying online payment is not available for this amount (not a 502 asking to try again)', async (_case, overrides) => {
    // Arrange
    const invoice = await aDraft(gateway.live, overrides);

    // Act
    const { answer, html } = await startCheckout(invoice.id);

    // Assert
    expect(answer.status).toBe(422);
    expect(html).toContain('Online payment is not available for this amount');
    expect(html).not.toContain('try again in a few minutes');
    expect(sessionsAtStripeFor(invoice.id)).toHaveLength(0);
  });
});

describe('a Checkout Session is reused only while Stripe still accepts it', () => {
  afterEach(() => {
    stripe.sessionLifetimeSeconds = 24 * 3600;
  });

  test('when the open session expired at Stripe and its event was lost, then Pay opens a new session', async () => {
    // Arrange
    stripe.holdEvents = true;
    const invoice = await aDraft(gateway.live);
    const first = await startCheckout(invoice.id);
    await stripe.expire(first.sessionId);

    // Act
    const second = await startCheckout(invoice.id);

    // Assert
    expect(second.sessionId).not.toBe('');
    expect(second.sessionId).not.toBe(first.sessionId);
    expect(stripe.session(second.sessionId).status).toBe('open');
    expect((await sessionRow(first.sessionId)).status).toBe('expired');
  });

  test('when the open session has less than an hour left before it expires, then Pay replaces it and expires it at Stripe', async () => {
    // Arrange: Stripe gives this session 30 minutes
    stripe.sessionLifetimeSeconds = 30 * 60;
    const invoice = await aDraft(gateway.live);
    const first = await startCheckout(invoice.id);
    stripe.sessionLifetimeSeconds = 24 * 3600;

    // Act
    const second = await startCheckout(invoice.id);

    // Assert
    expect(second.sessionId).not.toBe(first.sessionId);
    expect(stripe.session(first.sessionId).status).toBe('expired');
    expect(await sessionRow(second.sessionId)).toMatchObject({ status: 'open' });
  });

  test('when Stripe sends checkout.session.expired, then the session is marked expired and the next Pay opens a new one', async () => {
    // Arrange
    const invoice = await aDraft(gateway.live);
    const first = await startCheckout(invoice.id);

    // Act
    const status = await stripe.expire(first.sessionId);
    const after = await sessionRow(first.sessionId);
    const second = await startCheckout(invoice.id);

    // Assert
    expect(status).toBe(200);
    expect(after.status).toBe('expired');
    expect(second.sessionId).not.toBe(first.sessionId);
  });

  test('when a payment received elsewhere changes the amount due, then the open session for the old amount is expired at Stripe (the client cannot pay twice)', async () => {
    // Arrange
    const invoice = await aDraft(gateway.live);
    const { sessionId } = await startCheckout(invoice.id);

    // Act
    const recorded = await gateway.live.api.post(`/invoices/${invoice.id}/payments`, { amount: 50, method: 'bank_transfer' });

    // Assert
    expect(recorded.status).toBe(201);
    await eventually(() => stripe.session(sessionId).status === 'expired');
    await eventually(async () => (await sessionRow(sessionId)).status === 'expired');
    const next = await startCheckout(invoice.id);
    expect(stripe.session(next.sessionId)).toMatchObject({ status: 'open', amount_total: 10000 });
  });

  test('when the invoice is voided, then its open session is expired at Stripe and can no longer be paid', async () => {
    // Arrange
    const invoice = await aDraft(gateway.live);
    const { sessionId } = await startCheckout(invoice.id);

    // Act
    const voided = await gateway.live.api.post(`/invoices/${invoice.id}/void`);

    // Assert
    expect(voided.status).toBe(200);
    await eventually(() => stripe.session(sessionId).status === 'expired');
    await eventually(async () => (await sessionRow(sessionId)).status === 'expired');
    await expect(stripe.complete(sessionId)).rejects.toThrow(/expired/);
  });
});

describe('test-mode money never settles a live invoice', () => {
  test('when a checkout.session.completed with livemode false arrives for a live invoice\'s session, then it is acknowledged (2xx) and nothing is recorded', async () => {
    // Arrange
    stripe.holdEvents = true;
    const invoice = await aDraft(gateway.live);
    const { sessionId } = await startCheckout(invoice.id);
    await stripe.complete(sessionId);

    // Act
    const status = await stripe.deliver(sessionId, 'checkout.session.completed', { livemode: false });

    // Assert
    expect(status).toBe(200);
    const read = await invoiceOf(invoice.id);
    expect(read).toMatchObject({ status: 'viewed', amount_paid: 0, payments: [] });
    expect(await typesFor(invoice.id)).toEqual(['invoice.created']);
  });

  test('when the client returns from a session Stripe reports as test-mode, then nothing is recorded', async () => {
    stripe.holdEvents = true;
    const invoice = await aDraft(gateway.live);
    const { sessionId, page } = await startCheckout(invoice.id);
    await stripe.complete(sessionId);
    stripe.session(sessionId).livemode = false;

    const html = await (await fetch(`${page.path}?checkout_session=${sessionId}`)).text();

    expect(html).not.toContain('Paid — thank you');
    expect((await invoiceOf(invoice.id)).payments).toHaveLength(0);
  });
});

describe('test-mode credentials stored before they were refused', () => {
  test('when Stripe opens a test-mode session for a live invoice, then it is expired at once and the client gets the unavailable page, never a payable checkout', async () => {
    // Arrange: another live business whose stored key is a test key at Stripe
    const other = await gateway.app.tenant({ mode: 'live' });
    const account = { secretKey: 'sk_live_storedBeforeTheRule0001', webhookSecret: 'whsec_storedBeforeTheRule0001' };
    await gateway.app.server.services.gateways.set(other.businessId, { provider: 'stripe', ...account });
    stripe.account({ ...account, webhookUrl: `${gateway.app.url}/gateway/stripe/${other.businessId}/webhook`, testMode: true });
    const invoice = await aDraft(other);
    const url = (await other.api.post(`/invoices/${invoice.id}/initiate-payment`)).body.payment_url as string;
    const formToken = /name="form_token" value="([^"]+)"/.exec(await (await fetch(url)).text())?.[1] ?? '';

    // Act
    const answer = await fetch(url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ form_token: formToken }).toString() });

    // Assert
    expect(answer.status).toBe(502);
    expect(await answer.text()).toContain('Nothing was charged');
    expect(sessionsAtStripeFor(invoice.id).map((session) => [session.livemode, session.status])).toEqual([[false, 'expired']]);
    expect(await gateway.app.db.knex('checkout_sessions').where({ invoice_id: invoice.id })).toHaveLength(0);
  });
});

describe('stored credentials that no longer open', () => {
  test('when the gateway credentials cannot be opened, then the payment page still shows and Pay answers the page saying nothing was charged, never an error body', async () => {
    // Arrange: the two sealed secrets swapped (each is bound to its own column)
    const other = await gateway.app.tenant({ mode: 'live' });
    await gateway.app.server.services.gateways.set(other.businessId, { provider: 'stripe', secretKey: 'sk_live_willNotOpen000001', webhookSecret: 'whsec_willNotOpen000001' });
    const row = await gateway.app.db.knex('payment_gateways').where({ business_id: other.businessId }).first();
    await gateway.app.db.knex('payment_gateways').where({ id: row.id }).update({ secret_key_sealed: row.webhook_secret_sealed, webhook_secret_sealed: row.secret_key_sealed });
    const invoice = await aDraft(other);
    const url = (await other.api.post(`/invoices/${invoice.id}/initiate-payment`)).body.payment_url as string;

    // Act
    const shown = await fetch(url);
    const html = await shown.text();
    const formToken = /name="form_token" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const answer = await fetch(url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ form_token: formToken }).toString() });

    // Assert
    expect(shown.status).toBe(200);
    expect(html).toContain('<button type="submit">');
    expect(answer.status).toBe(502);
    expect(answer.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await answer.text()).toContain('Nothing was charged');
  });
});

describe('one gateway event is one event', () => {
  test('when Stripe delivers the same async_payment_failed three times, then payment.failed fires once', async () => {
    // Arrange
    stripe.asyncPayments = true;
    stripe.holdEvents = true;
    const invoice = await aDraft(gateway.live);
    const { sessionId } = await startCheckout(invoice.id);
    await stripe.complete(sessionId);

    // Act
    const statuses = [await stripe.settleAsync(sessionId, 'failed'), ...(await Promise.all([stripe.settleAsync(sessionId, 'failed'), stripe.settleAsync(sessionId, 'failed')]))];

    // Assert
    expect(statuses).toEqual([200, 200, 200]);
    const failed = (await eventsOf(gateway.app, gateway.live.businessId)).filter((e) => e.type === 'payment.failed' && e.data.invoice.id === invoice.id);
    expect(failed).toHaveLength(1);
  });
});

describe('the return page reads a checkout from Stripe at most once per interval', () => {
  const readsOf = (sessionId: string) => stripe.requests.filter((r) => r.method === 'GET' && r.path === `/v1/checkout/sessions/${sessionId}`).length;

  test('when the return page of a pending delayed payment is reloaded five times within seconds, then Stripe is read once', async () => {
    // Arrange: a delayed payment method, its events held, so only the return page could learn of it
    stripe.asyncPayments = true;
    stripe.holdEvents = true;
    const invoice = await aDraft(gateway.live);
    const { sessionId, page } = await startCheckout(invoice.id);
    await stripe.complete(sessionId);

    // Act
    const pages: string[] = [];
    for (let reload = 0; reload < 5; reload++) pages.push(await (await fetch(`${page.path}?checkout_session=${sessionId}`)).text());

    // Assert
    expect(readsOf(sessionId)).toBe(1);
    for (const html of pages) expect(html).toContain('Confirming your payment');
  });

  test('when Pay is posted five times within seconds, then the open session is reused and read from Stripe at most once', async () => {
    // Arrange
    const invoice = await aDraft(gateway.live);
    const first = await startCheckout(invoice.id);
    const pay = async () => {
      const body = new URLSearchParams({ form_token: first.page.formToken }).toString();
      const html = await (await fetch(first.page.path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body })).text();
      return /\/checkout\/(cs_live_[0-9a-f]+)/.exec(html)?.[1];
    };

    // Act
    const again: (string | undefined)[] = [];
    for (let post = 0; post < 5; post++) again.push(await pay());

    // Assert
    expect(again).toEqual(Array(5).fill(first.sessionId));
    expect(readsOf(first.sessionId)).toBeLessThanOrEqual(1);
  });

  test('when the checkout is complete, then returning to the page reads nothing from Stripe', async () => {
    // Arrange
    const invoice = await aDraft(gateway.live);
    const { sessionId, page } = await startCheckout(invoice.id);
    await stripe.complete(sessionId);
    const before = readsOf(sessionId);

    // Act
    const html = await (await fetch(`${page.path}?checkout_session=${sessionId}`)).text();

    // Assert
    expect(html).toContain('Paid — thank you');
    expect(readsOf(sessionId)).toBe(before);
  });
});

describe('a delayed payment still being confirmed', () => {
  test('when the checkout is complete but its delayed payment pending, then the page offers no Pay button, says the payment is being confirmed, and a posted Pay opens no new checkout', async () => {
    // Arrange: Stripe's checkout.session.completed arrives with the payment still unpaid
    stripe.asyncPayments = true;
    const invoice = await aDraft(gateway.live);
    const { sessionId, page } = await startCheckout(invoice.id);
    await stripe.complete(sessionId);

    // Act
    const html = await (await fetch(page.path)).text();
    const posted = await fetch(page.path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ form_token: page.formToken }).toString(),
    });
    const afterPost = await posted.text();

    // Assert
    expect(html).toContain('Confirming your payment with the payment provider');
    expect(html).not.toMatch(/<button[^>]*>Pay/);
    expect(afterPost).toContain('Confirming your payment with the payment provider');
    expect(sessionsAtStripeFor(invoice.id)).toHaveLength(1);
    expect((await invoiceOf(invoice.id)).amount_paid).toBe(0);
  });

  test('when the pending delayed payment fails, then the page offers Pay again', async () => {
    // Arrange
    stripe.asyncPayments = true;
    const invoice = await aDraft(gateway.live);
    const { sessionId, page } = await startCheckout(invoice.id);
    await stripe.complete(sessionId);

    // Act
    await stripe.settleAsync(sessionId, 'failed');
    const html = await (await fetch(page.path)).text();

    // Assert
    expect(html).toMatch(/<button[^>]*>Pay/);
    expect(html).not.toContain('Confirming your payment');
  });
});
