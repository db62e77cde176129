/** The payment page's form over HTTP: CSRF refusals, one payment per invoice, the page's headers. */
import { aDraft, Tenant, useApp } from '../support/app';

const ctx = useApp();

/** The link's path on the test server, and the page's form token. */
async function openPage(t: Tenant, invoiceId: number): Promise<{ link: string; formToken: string; html: string; headers: Headers }> {
  const url = new URL((await t.api.post(`/invoices/${invoiceId}/initiate-payment`)).body.payment_url);
  const link = `${ctx.app.url}${url.pathname}`;
  const res = await fetch(link);
  const html = await res.text();
  return { link, formToken: /name="form_token" value="([^"]+)"/.exec(html)?.[1] ?? '', html, headers: res.headers };
}

function submit(link: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(link, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

const paymentsOf = async (t: Tenant, invoiceId: number) => (await t.api.get(`/payments?invoice_id=${invoiceId}`)).body.data as unknown[];

describe('POST /pay/{token}', () => {
  test('when the page form is submitted with its token, then one payment is recorded and the browser goes back to the page', async () => {
    // Arrange
    const invoice = await aDraft(ctx.t);
    const { link, formToken } = await openPage(ctx.t, invoice.id);

    // Act
    const first = await submit(link, { form_token: formToken });
    const again = await submit(link, { form_token: formToken });

    // Assert
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe(new URL(link).pathname);
    expect(again.status).toBe(303);
    expect(await paymentsOf(ctx.t, invoice.id)).toHaveLength(1);
    expect((await ctx.t.api.get(`/invoices/${invoice.id}`)).body.invoice.status).toBe('paid');
  });

  test.each([
    ['no form token', () => ({}), {}],
    ['a malformed form token', () => ({ form_token: 'x' }), {}],
    ['a cross-site fetch', (token: string) => ({ form_token: token }), { 'sec-fetch-site': 'cross-site' }],
    ['another origin', (token: string) => ({ form_token: token }), { origin: 'https://attacker.example' }],
  ])('when the form comes with %s, then it is refused with a page and nothing is paid', async (_case, fields, headers) => {
    // Arrange
    const invoice = await aDraft(ctx.t);
    const { link, formToken } = await openPage(ctx.t, invoice.id);

    // Act
    const res = await submit(link, fields(formToken), headers);

    // Assert
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toContain('Please try again');
    expect(await paymentsOf(ctx.t, invoice.id)).toHaveLength(0);
  });

  test('when the form token of one invoice is sent to another invoice, then it is refused', async () => {
    // Arrange
    const mine = await openPage(ctx.t, (await aDraft(ctx.t)).id);
    const target = await aDraft(ctx.t);
    const other = await openPage(ctx.t, target.id);

    // Act
    const res = await submit(other.link, { form_token: mine.formToken });

    // Assert
    expect(res.status).toBe(403);
    expect(await paymentsOf(ctx.t, target.id)).toHaveLength(0);
  });

  test('when a live invoice without a gateway is posted to, then nothing is paid', async () => {
    // Arrange
    const live = await ctx.app.tenant({ mode: 'live' });
    const invoice = await aDraft(live);
    const { link, html } = await openPage(live, invoice.id);

    // Act
    const res = await submit(link, { form_token: 'x' });

    // Assert
    expect(html).not.toContain('form_token');
    expect(res.status).toBe(403);
    expect(await paymentsOf(live, invoice.id)).toHaveLength(0);
  });

  test('when the token names no invoice, then it is the 404 page', async () => {
    const res = await submit(`${ctx.app.url}/pay/${'A'.repeat(43)}`, { form_token: 'x' });

    expect(res.status).toBe(404);
  });
});

describe('the page itself', () => {
  test('when it is served, then it carries a strict policy, no script and its stylesheet answers', async () => {
    // Arrange / Act
    const { headers, html } = await openPage(ctx.t, (await aDraft(ctx.t)).id);
    const css = await fetch(`${ctx.app.url}/assets/pages.css`);

    // Assert
    const policy = headers.get('content-security-policy') ?? '';
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("form-action 'self'");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).not.toContain('unsafe-inline');
    expect(headers.get('x-frame-options')).toBe('DENY');
    expect(headers.get('x-robots-tag')).toBe('noindex');
    expect(html).not.toMatch(/<script|style=|<style/i);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
  });
});
