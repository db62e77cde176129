/** PDFs under load: made on worker threads, so a long one does not stall the server; public downloads are limited per address. */
import { aClient, aDraft, useApp } from '../support/app';
import { pdfInfo, pdfText } from '../support/pdf';

describe('PDFs are made off the event loop', () => {
  // One thread, so the queue's limit is known; enough requests a minute for the small requests made meanwhile.
  const ctx = useApp({ rateLimitPerMinute: 100_000, pdfThreads: 1 });

  test('when the longest invoice allowed is being made into a PDF, then the server keeps answering other requests meanwhile', async () => {
    // Arrange: 500 items of 1000 characters, the validation limits
    const client = (await ctx.t.api.post('/clients', aClient())).body.client;
    const description = (index: number) => `Item${index} ${'consulting and review of the platform migration '.repeat(21)}`.slice(0, 1000);
    const items = Array.from({ length: 500 }, (_, index) => ({ description: description(index), quantity: 1, unit_price: 1 }));
    const created = await ctx.t.api.post('/invoices', { client_id: client.id, currency: 'USD', due_date: '2099-12-31', items });
    expect(created.status).toBe(201);
    const small = await aDraft(ctx.t);

    // Act: small requests, one after another, for as long as the PDF takes
    let done = false;
    const pdf = ctx.t.api.get(`/invoices/${created.body.invoice.id}/pdf`).finally(() => {
      done = true;
    });
    let answered = 0;
    while (!done) {
      const res = await ctx.t.api.get(`/invoices/${small.id}`);
      expect(res.status).toBe(200);
      answered += done ? 0 : 1;
    }

    // Assert
    const res = await pdf;
    expect(res.status).toBe(200);
    expect(answered).toBeGreaterThanOrEqual(5);
    expect(Number((await pdfInfo(res.bytes)).Pages)).toBeGreaterThan(100);
    const text = await pdfText(res.bytes);
    expect(text).toContain('Item0 consulting');
    expect(text).toContain('Item499 consulting');
    expect(text).toMatch(/Amount due\s+\$500\.00/);
  });

  test('when more PDFs are asked for at once than a thread may keep waiting, then the excess get 503 service_unavailable and the rest their PDF', async () => {
    // Arrange: 60 long lines, about 0.1 s of PDF each
    const client = (await ctx.t.api.post('/clients', aClient())).body.client;
    const items = Array.from({ length: 60 }, (_, index) => ({ description: `Line${index} ${'platform migration review '.repeat(40)}`.slice(0, 1000), quantity: 1, unit_price: 1 }));
    const invoice = (await ctx.t.api.post('/invoices', { client_id: client.id, currency: 'USD', due_date: '2099-12-31', items })).body.invoice;

    // Act: 50 at once, against one thread that keeps at most 16 waiting
    const answers = await Promise.all(Array.from({ length: 50 }, () => ctx.t.api.get(`/invoices/${invoice.id}/pdf`)));

    // Assert
    const refused = answers.filter((res) => res.status === 503);
    expect(answers.filter((res) => res.status !== 200 && res.status !== 503)).toEqual([]);
    expect(refused.length).toBeGreaterThan(0);
    expect(answers.length - refused.length).toBeGreaterThanOrEqual(17);
    expect(refused[0].body).toMatchObject({ error: 'service_unavailable', message: expect.stringContaining('retry') });
    expect(refused[0].headers.get('retry-after')).toBe('5');
    const after = await ctx.t.api.get(`/invoices/${invoice.id}/pdf`);
    expect(after.status).toBe(200);
  });
});

describe('GET /pay/{token}/pdf is limited per client address', () => {
  const ctx = useApp({ pdfDownloadsPerMinute: 2 });

  test('when an address downloads more PDFs in a minute than allowed, then it gets a 429 page with Retry-After, and the payment page still opens', async () => {
    // Arrange
    const invoice = await aDraft(ctx.t);
    const link = `${ctx.app.url}${new URL((await ctx.t.api.post(`/invoices/${invoice.id}/initiate-payment`)).body.payment_url).pathname}`;

    // Act
    const statuses = [];
    for (let download = 0; download < 2; download += 1) statuses.push((await fetch(`${link}/pdf`)).status);
    const refused = await fetch(`${link}/pdf`);
    const page = await fetch(link);

    // Assert
    expect(statuses).toEqual([200, 200]);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await refused.text()).toContain('Please try again shortly');
    expect(page.status).toBe(200);
  });
});
