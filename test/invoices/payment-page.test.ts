import { aDraft, eventsOf, useApp } from '../support/app';

const ctx = useApp({ baseUrl: 'https://pay.example.com' });

/** The payment link's path on the test server (BASE_URL is the public address). */
async function linkOf(invoiceId: number, t = ctx.t): Promise<string> {
  const url = new URL((await t.api.post(`/invoices/${invoiceId}/initiate-payment`)).body.payment_url);
  return `${ctx.app.url}${url.pathname}`;
}

describe('GET /pay/{token}', () => {
  test('when the client opens the link, then the page shows the invoice and it becomes viewed once', async () => {
    const t = await ctx.app.tenant();
    const invoice = await aDraft(t, { notes: '<b>Thanks</b>' });
    const link = await linkOf(invoice.id, t);

    const first = await fetch(link);
    const html = await first.text();
    await fetch(link);

    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toMatch(/^text\/html/);
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(first.headers.get('referrer-policy')).toBe('no-referrer');
    expect(html).toContain('INV-000001');
    expect(html).toContain('$150.00');
    expect(html).toContain('&lt;b&gt;Thanks&lt;/b&gt;');
    const read = (await t.api.get(`/invoices/${invoice.id}`)).body.invoice;
    expect(read).toMatchObject({ status: 'viewed', viewed_at: expect.any(String) });
    const viewed = (await eventsOf(ctx.app, t.businessId)).filter((e) => e.type === 'invoice.viewed');
    expect(viewed).toHaveLength(1);
    expect(viewed[0].data.invoice).toEqual(read);
  });

  test('when a viewed invoice is paid in part, then it is partial and a later view does not move it back', async () => {
    const invoice = await aDraft(ctx.t);
    const link = await linkOf(invoice.id);
    await fetch(link);

    await ctx.t.api.post(`/invoices/${invoice.id}/simulate-payment`, { amount: 10 });
    await fetch(link);

    expect((await ctx.t.api.get(`/invoices/${invoice.id}`)).body.invoice.status).toBe('partial');
  });

  test('when a link checker sends HEAD, then the invoice is not marked viewed', async () => {
    const invoice = await aDraft(ctx.t);
    const link = await linkOf(invoice.id);

    const res = await fetch(link, { method: 'HEAD' });

    expect(res.status).toBe(200);
    expect((await ctx.t.api.get(`/invoices/${invoice.id}`)).body.invoice).toMatchObject({ status: 'sent', viewed_at: null });
  });

  test('when the page\'s PDF is fetched, then it is the invoice with the hosted pages\' headers, and an unknown token is a 404 page', async () => {
    const invoice = await aDraft(ctx.t);
    const link = await linkOf(invoice.id);

    const pdf = await fetch(`${link}/pdf`);
    const unknown = await fetch(`${ctx.app.url}/pay/${'A'.repeat(43)}/pdf`);

    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    expect(pdf.headers.get('content-disposition')).toMatch(/^attachment; filename="?INV-\d{6}\.pdf"?$/);
    expect(pdf.headers.get('cache-control')).toBe('no-store');
    expect(Buffer.from(await pdf.arrayBuffer()).subarray(0, 5).toString()).toBe('%PDF-');
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('Invoice not found');
    expect((await ctx.t.api.get(`/invoices/${invoice.id}`)).body.invoice.viewed_at).toBeNull();
  });

  test('when the token is unknown or malformed, then it is a 404 page', async () => {
    for (const token of ['A'.repeat(43), 'short']) {
      const res = await fetch(`${ctx.app.url}/pay/${token}`);

      expect(res.status).toBe(404);
      expect(await res.text()).toContain('not valid');
    }
  });
});
