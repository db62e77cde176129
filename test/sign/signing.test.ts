/**
 * The signing pages over HTTP: both parties named, signatures with their audit record, decline
 * after its confirmation page, the signed copy, countersigning, contract.signed once, framing.
 */
import { createHash } from 'node:crypto';
import { businessChangesSchema } from '../../server/businesses/schema';
import { validateInput } from '../../server/validation';
import { aClient, eventsOf, Tenant, useApp } from '../support/app';
import { pdfText, renderPdf } from '../support/pdf';

const ctx = useApp();

async function aContract(t: Tenant = ctx.t, client: Record<string, unknown> = {}): Promise<any> {
  const created = await t.api.post('/clients', aClient(client));
  const res = await t.api.post('/contracts', { title: 'Website build', client_id: created.body.client.id, body: 'We build.\nYou pay 1 000 EUR.', amount: 1000, currency: 'eur' });
  return res.body.contract;
}

/** The page's text: its HTML without tags, one space between words. */
const textOf = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/&#39;/g, "'").replace(/\s+/g, ' ');

/** The page's path on the test server, with its form token. */
async function openPage(url: string): Promise<{ path: string; formToken: string; html: string; headers: Headers; status: number }> {
  const path = `${ctx.app.url}${new URL(url).pathname}`;
  const res = await fetch(path);
  const html = await res.text();
  return { path, formToken: /name="form_token" value="([^"]+)"/.exec(html)?.[1] ?? '', html, headers: res.headers, status: res.status };
}

function post(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(path, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'SigningTest/1.0', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

async function signAsClient(contract: any, name = 'Grace Hopper'): Promise<Response> {
  const page = await openPage(contract.signing_url);
  return post(page.path, { form_token: page.formToken, action: 'sign', full_name: name, agree: 'yes' });
}

const signedEvents = async (contractId: number, t: Tenant = ctx.t) =>
  (await eventsOf(ctx.app, t.businessId)).filter((e) => e.type === 'contract.signed' && e.data.contract.id === contractId);

describe('the client signs at signing_url', () => {
  test('when the form is filled in and sent, then the signature and its audit record are kept and the form is gone', async () => {
    // Arrange
    const contract = await aContract();

    // Act
    const res = await signAsClient(contract);
    const after = await openPage(contract.signing_url);

    // Assert
    expect(res.status).toBe(303);
    const read = (await ctx.t.api.get(`/contracts/${contract.id}`)).body.contract;
    const sha = createHash('sha256').update(contract.body, 'utf8').digest('hex');
    expect(read).toMatchObject({ status: 'partially_signed', client_signed_at: expect.any(String), business_signed_at: null });
    expect(read.signatures).toEqual([{ party: 'client', name: 'Grace Hopper', signed_at: read.client_signed_at, document_sha256: sha }]);
    const audit = await ctx.app.db.knex('contract_signatures').where({ contract_id: contract.id }).first();
    expect(audit).toMatchObject({ party: 'client', ip_address: expect.stringMatching(/127\.0\.0\.1/), user_agent: 'SigningTest/1.0', document_sha256: sha });
    expect(after.html).toContain('Signed by Grace Hopper');
    expect(after.html).not.toContain('form_token');
    expect(await signedEvents(contract.id)).toHaveLength(0);
  });

  test.each([
    ['no name', { full_name: '  ', agree: 'yes' }, 'Type your full name'],
    ['the box unticked', { full_name: 'Grace Hopper' }, 'I agree'],
  ])('when the form comes with %s, then the page says what is missing and nothing is signed', async (_case, fields, message) => {
    // Arrange
    const contract = await aContract();
    const page = await openPage(contract.signing_url);

    // Act
    const res = await post(page.path, { form_token: page.formToken, action: 'sign', ...fields });

    // Assert
    expect(res.status).toBe(422);
    expect(await res.text()).toContain(message);
    expect((await ctx.t.api.get(`/contracts/${contract.id}`)).body.contract.status).toBe('pending');
  });

  test('when the form comes without its token, then it is refused and nothing is signed', async () => {
    const contract = await aContract();
    const page = await openPage(contract.signing_url);

    const res = await post(page.path, { action: 'sign', full_name: 'Mallory', agree: 'yes' });

    expect(res.status).toBe(403);
    expect((await ctx.t.api.get(`/contracts/${contract.id}`)).body.contract.signatures).toEqual([]);
  });

  test('when the client confirms the decline, then the contract is declined and can no longer be signed by anyone', async () => {
    // Arrange
    const contract = await aContract();
    const page = await openPage(contract.signing_url);

    // Act
    const declined = await post(page.path, { form_token: page.formToken, action: 'confirm_decline' });
    const signAfter = await post(page.path, { form_token: page.formToken, action: 'sign', full_name: 'Grace Hopper', agree: 'yes' });
    const countersign = await ctx.t.api.post(`/contracts/${contract.id}/countersign`, { name: 'Ada Lovelace' });

    // Assert
    expect(declined.status).toBe(303);
    expect(signAfter.status).toBe(303);
    expect(countersign.status).toBe(422);
    expect(countersign.body.error).toBe('invalid_state');
    const read = (await ctx.t.api.get(`/contracts/${contract.id}`)).body.contract;
    expect(read).toMatchObject({ status: 'declined', signatures: [] });
    expect((await openPage(contract.signing_url)).html).toContain('This contract was declined');
  });

  test('when the signing page opens, then it names both parties: the business by its legal name, the client with its company', async () => {
    // Arrange
    const t = await ctx.app.tenant();
    await ctx.app.server.services.businesses.update(t.businessId, validateInput(businessChangesSchema, { legal_name: 'Muster Design GmbH' }));
    const contract = await aContract(t, { name: 'Camille Martin', company: 'Atelier Martin SARL' });

    // Act
    const page = await openPage(contract.signing_url);

    // Assert
    expect(textOf(page.html)).toContain('Business Muster Design GmbH Client Camille Martin Atelier Martin SARL');
  });

  test('when the client presses Decline, then a page (a plain link, no script) asks for the confirmation, and nothing is declined until Confirm decline', async () => {
    // Arrange
    const contract = await aContract();
    const page = await openPage(contract.signing_url);
    const declineForm = /<form method="get" action="([^"]+)">\s*<button type="submit" class="secondary">Decline<\/button>/.exec(page.html);

    // Act
    const asked = await fetch(`${ctx.app.url}${declineForm?.[1]}`);
    const askedHtml = await asked.text();
    const statusWhileAsked = (await ctx.t.api.get(`/contracts/${contract.id}`)).body.contract.status;
    const formToken = /name="form_token" value="([^"]+)"/.exec(askedHtml)?.[1] ?? '';
    const confirmAction = /<form method="post" action="([^"]+)">/.exec(askedHtml)?.[1];
    const confirmed = await post(`${ctx.app.url}${confirmAction}`, { form_token: formToken, action: 'confirm_decline' });

    // Assert
    expect(declineForm?.[1]).toBe(`${new URL(contract.signing_url).pathname}/decline`);
    expect(asked.status).toBe(200);
    expect(askedHtml).not.toContain('<script');
    expect(askedHtml).toMatch(/<input type="hidden" name="action" value="confirm_decline">\s*<button type="submit" class="danger">Confirm decline<\/button>/);
    expect(textOf(askedHtml)).toContain('Once declined, this contract can no longer be signed');
    expect(askedHtml).toContain(`<a href="${new URL(contract.signing_url).pathname}">Back to the contract</a>`);
    expect(statusWhileAsked).toBe('pending');
    expect(confirmAction).toBe(new URL(contract.signing_url).pathname);
    expect(confirmed.status).toBe(303);
    expect(confirmed.headers.get('location')).toBe(new URL(contract.signing_url).pathname);
    expect((await ctx.t.api.get(`/contracts/${contract.id}`)).body.contract.status).toBe('declined');
  });

  test('when a form posts the old Decline (no confirmation), then it leads to the decline page and declines nothing', async () => {
    const contract = await aContract();
    const page = await openPage(contract.embed_url);

    const res = await post(page.path, { form_token: page.formToken, action: 'decline' });

    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`${new URL(contract.embed_url).pathname}/decline`);
    expect((await ctx.t.api.get(`/contracts/${contract.id}`)).body.contract.status).toBe('pending');
  });

  test('when the decline page of a signed or declined contract is opened, then it leads back to the page', async () => {
    const contract = await aContract();
    await signAsClient(contract);

    const res = await fetch(`${ctx.app.url}${new URL(contract.signing_url).pathname}/decline`, { redirect: 'manual' });

    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(new URL(contract.signing_url).pathname);
  });

  test('when the token names no contract, then it is a 404 page', async () => {
    const res = await fetch(`${ctx.app.url}/contracts/${'A'.repeat(43)}/sign`);

    expect(res.status).toBe(404);
    expect(await res.text()).toContain('Contract not found');
  });
});

describe('the signed copy (Download signed PDF)', () => {
  const pdfOf = (contract: any) => fetch(`${ctx.app.url}${new URL(contract.signing_url).pathname.replace(/\/sign$/, '/pdf')}`);

  test('when both parties have signed, then the page links a PDF with the text, both names, times, IP addresses and the document hash', async () => {
    // Arrange
    const contract = await aContract(ctx.t, { name: 'Grace Client', company: 'Hopper Labs' });
    await signAsClient(contract, 'Grace Hopper');
    await ctx.t.api.post(`/contracts/${contract.id}/countersign`, { name: 'Ada Lovelace' });
    const signed = (await ctx.t.api.get(`/contracts/${contract.id}`)).body.contract;
    const page = await openPage(contract.signing_url);
    const link = /<a class="download" href="([^"]+)" download>Download signed PDF<\/a>/.exec(page.html)?.[1];

    // Act
    const res = await fetch(`${ctx.app.url}${link}`);
    const bytes = Buffer.from(await res.arrayBuffer());
    await renderPdf(bytes, 'contract-signed');
    const text = await pdfText(bytes);

    // Assert
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename=signed-contract-${contract.id}.pdf`);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(text).toContain('CONTRACT');
    expect(text).toMatch(/Business\s+Test Business/);
    expect(text).toMatch(/Client\s+Grace Client, Hopper Labs/);
    expect(text).toMatch(/Status\s+Signed by both parties/);
    expect(text).toContain('We build.');
    expect(text).toContain('You pay 1 000 EUR.');
    const sha = createHash('sha256').update(contract.body, 'utf8').digest('hex');
    expect(text).toMatch(new RegExp(`Document SHA-256\\s+${sha}`));
    for (const signature of signed.signatures) {
      const time = `${signature.signed_at.slice(0, 10)} ${signature.signed_at.slice(11, 19)} UTC`;
      const party = signature.party === 'client' ? 'Client' : 'Business';
      expect(text).toMatch(new RegExp(`${party}\\s+${signature.name}\\s+Signed at\\s+${time}\\s+IP address\\s+\\S*127\\.0\\.0\\.1\\s+Text SHA-256\\s+${sha}`));
    }
  });

  test('when only the client has signed, then the copy is offered already and says it awaits the business', async () => {
    const contract = await aContract();
    await signAsClient(contract);

    const page = await openPage(contract.signing_url);
    const text = await pdfText(Buffer.from(await (await pdfOf(contract)).arrayBuffer()));

    expect(page.html).toContain('Download signed PDF');
    expect(text).toMatch(/Status\s+Signed by the client; awaiting the business's signature/);
    expect(text).toMatch(/Client\s+Grace Hopper\s+Signed at/);
    expect(text).not.toMatch(/^\s*Business\s+Ada/m);
  });

  test.each([
    ['the client has not signed (the business has)', async (contract: any) => ctx.t.api.post(`/contracts/${contract.id}/countersign`, { name: 'Ada Lovelace' })],
    ['the contract was declined', async (contract: any) => {
      const page = await openPage(contract.signing_url);
      return post(page.path, { form_token: page.formToken, action: 'confirm_decline' });
    }],
  ])('when %s, then the page offers no copy and the PDF\'s address is a 404 page', async (_case, arrange) => {
    const contract = await aContract();
    await arrange(contract);

    const page = await openPage(contract.signing_url);
    const res = await pdfOf(contract);

    expect(page.html).not.toContain('Download signed PDF');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toContain('Not signed yet');
  });

  test('when the token names no contract, then the PDF\'s address is a 404 page', async () => {
    const res = await fetch(`${ctx.app.url}/contracts/${'A'.repeat(43)}/pdf`);

    expect(res.status).toBe(404);
    expect(await res.text()).toContain('Contract not found');
  });
});

describe('countersigning and contract.signed', () => {
  test('when the client signed and the business countersigns, then it is signed and contract.signed fires once', async () => {
    // Arrange
    const contract = await aContract();
    await signAsClient(contract);

    // Act
    const res = await ctx.t.api.post(`/contracts/${contract.id}/countersign`, { name: 'Ada Lovelace' });
    const again = await ctx.t.api.post(`/contracts/${contract.id}/countersign`, { name: 'Ada Lovelace' });

    // Assert
    expect(res.status).toBe(200);
    expect(res.body.contract).toMatchObject({ status: 'signed', business_signed_at: expect.any(String) });
    expect(res.body.contract.signatures.map((s: any) => s.party)).toEqual(['client', 'business']);
    expect(again.status).toBe(422);
    const events = await signedEvents(contract.id);
    expect(events).toHaveLength(1);
    expect(events[0].data.contract).toEqual(res.body.contract);
  });

  test('when the business countersigns first, then the client\'s signature completes it', async () => {
    const contract = await aContract();
    await ctx.t.api.post(`/contracts/${contract.id}/countersign`, { name: 'Ada Lovelace' });

    await signAsClient(contract);

    expect((await ctx.t.api.get(`/contracts/${contract.id}`)).body.contract.status).toBe('signed');
    expect(await signedEvents(contract.id)).toHaveLength(1);
  });

  test('when both parties sign at the same moment, then contract.signed fires exactly once', async () => {
    // Arrange
    const contracts = await Promise.all(Array.from({ length: 5 }, () => aContract()));
    const pages = await Promise.all(contracts.map((c) => openPage(c.signing_url)));

    // Act
    await Promise.all(
      contracts.flatMap((contract, i) => [
        post(pages[i].path, { form_token: pages[i].formToken, action: 'sign', full_name: 'Grace Hopper', agree: 'yes' }),
        post(pages[i].path, { form_token: pages[i].formToken, action: 'sign', full_name: 'Grace Hopper', agree: 'yes' }),
        ctx.t.api.post(`/contracts/${contract.id}/countersign`, { name: 'Ada Lovelace' }),
      ]),
    );

    // Assert
    for (const contract of contracts) {
      const read = (await ctx.t.api.get(`/contracts/${contract.id}`)).body.contract;
      expect(read.status).toBe('signed');
      expect(read.signatures).toHaveLength(2);
      expect(await signedEvents(contract.id)).toHaveLength(1);
    }
  });

  test('when a key of another business countersigns, then it is a 404', async () => {
    const contract = await aContract();
    const other = await ctx.app.tenant();

    const res = await other.api.post(`/contracts/${contract.id}/countersign`, { name: 'Mallory' });

    expect(res.status).toBe(404);
  });
});

describe('framing', () => {
  test('when signing_url is served, then no site may frame it', async () => {
    const page = await openPage((await aContract()).signing_url);

    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });

  test('when embed_url is served, then any site may frame it until the business names its origins', async () => {
    // Arrange
    const t = await ctx.app.tenant();
    const contract = await aContract(t);
    const before = await openPage(contract.embed_url);

    // Act
    await ctx.app.server.services.businesses.update(t.businessId, { embed_origins: ['https://shop.example', 'http://localhost:8080'] });
    const after = await openPage(contract.embed_url);

    // Assert
    expect(before.headers.get('x-frame-options')).toBeNull();
    expect(before.headers.get('content-security-policy')).toContain('frame-ancestors *');
    expect(after.headers.get('content-security-policy')).toContain('frame-ancestors https://shop.example http://localhost:8080');
    expect(after.headers.get('x-frame-options')).toBeNull();
  });
});
