/** GET /invoices/{id}/pdf: the invoice as a PDF, read back with poppler's pdftotext and rendered with pdftoppm. */
import { formatMoney } from '../../server/invoices/email';
import { aClient, aDraft, Tenant, useApp } from '../support/app';
import { pdfInfo, pdfText, renderPdf } from '../support/pdf';

const ctx = useApp({ baseUrl: 'https://pay.example.com' });

async function download(t: Tenant, invoiceId: number) {
  const res = await t.api.get(`/invoices/${invoiceId}/pdf`);
  if (res.status !== 200) throw new Error(`no PDF: ${res.status} ${res.text}`);
  return res;
}

/** The file name a download is saved under (quoted or not: both are RFC 6266). */
function filenameOf(res: { headers: Headers }): string | undefined {
  const disposition = res.headers.get('content-disposition') ?? '';
  return /^attachment; filename="?([^";]+)"?$/.exec(disposition)?.[1];
}

/** A tenant whose business has `name`, and one of its clients. */
async function aBusinessNamed(name: string, client: Record<string, unknown>): Promise<{ t: Tenant; clientId: number }> {
  const business = await ctx.app.server.services.businesses.create({ name, currency: 'USD', country: 'TR' });
  const t = await ctx.app.tenant({ businessId: business.id });
  const created = await t.api.post('/clients', aClient(client));
  return { t, clientId: created.body.client.id };
}

describe('GET /invoices/{id}/pdf', () => {
  test('when an issued invoice is downloaded, then it is a PDF named by its number with the client, items, amount due and payment link', async () => {
    // Arrange
    const invoice = await aDraft(ctx.t);
    const { payment_url: paymentUrl } = (await ctx.t.api.post(`/invoices/${invoice.id}/initiate-payment`)).body;
    const client = (await ctx.t.api.get(`/clients/${invoice.client_id}`)).body.client;

    // Act
    const res = await download(ctx.t, invoice.id);

    // Assert
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(filenameOf(res)).toBe('INV-000001.pdf');
    expect(res.bytes.subarray(0, 5).toString()).toBe('%PDF-');
    const text = await pdfText(res.bytes);
    expect(text).toContain('INVOICE');
    expect(text).toMatch(/Invoice number\s+INV-000001/);
    expect(text).toContain(client.name);
    expect(text).toContain(client.email);
    expect(text).toMatch(/Design\s+2\s+\$50\.00\s+\$100\.00/);
    expect(text).toMatch(/Hosting\s+1\s+\$30\.00\s+\$30\.00/);
    expect(text).toMatch(/Amount due\s+\$150\.00/);
    expect(text).toContain('Awaiting payment');
    expect(text).toContain(paymentUrl);
    expect(text).toContain('TEST MODE');
    expect((await pdfInfo(res.bytes)).Title).toBe('Invoice INV-000001 from Test Business');
    await renderPdf(res.bytes, 'invoice');
  });

  test('when the invoice is paid, then the PDF is the receipt: payment date, method, amount paid, and no payment link', async () => {
    const invoice = await aDraft(ctx.t);
    await ctx.t.api.post(`/invoices/${invoice.id}/initiate-payment`);
    await ctx.t.api.post(`/invoices/${invoice.id}/simulate-payment`);
    const paid = (await ctx.t.api.get(`/invoices/${invoice.id}`)).body.invoice;

    const res = await download(ctx.t, invoice.id);

    expect(filenameOf(res)).toBe(`receipt-${paid.number}.pdf`);
    const text = await pdfText(res.bytes);
    expect(text).toContain('RECEIPT');
    expect(text).toMatch(new RegExp(`Receipt for invoice\\s+${paid.number}`));
    expect(text).toMatch(new RegExp(`Paid on\\s+${paid.paid_at.slice(0, 10)}`));
    expect(text).toMatch(/Payment method\s+Test payment/);
    expect(text).toMatch(/Amount paid\s+\$150\.00/);
    expect(text).not.toContain('Amount due');
    expect(text).not.toContain('/pay/');
    await renderPdf(res.bytes, 'receipt');
  });

  test('when the invoice is a draft, then the PDF says it is not issued and has no number or payment link', async () => {
    const draft = await aDraft(ctx.t);

    const res = await download(ctx.t, draft.id);

    expect(filenameOf(res)).toBe(`draft-${draft.id}.pdf`);
    const text = await pdfText(res.bytes);
    expect(text).toContain('Draft, not issued');
    expect(text).not.toContain('INV-');
    expect(text).not.toContain('Pay online');
  });

  test('when there are 60 items and a description near the 1000-character limit, then every line and every word appears once, over numbered pages with the header repeated', async () => {
    // Arrange
    const client = (await ctx.t.api.post('/clients', aClient())).body.client;
    const long = Array.from({ length: 137 }, (_, index) => `word${index}`).join(' '); // 985 characters: near the limit
    const items = Array.from({ length: 60 }, (_, index) => ({ description: index === 30 ? long : `Service line ${index + 1}`, quantity: 1, unit_price: 10 }));
    const invoice = (await ctx.t.api.post('/invoices', { client_id: client.id, currency: 'USD', due_date: '2099-12-31', items })).body.invoice;

    // Act
    const res = await download(ctx.t, invoice.id);

    // Assert
    const pages = Number((await pdfInfo(res.bytes)).Pages);
    expect(pages).toBeGreaterThanOrEqual(3);
    const text = await pdfText(res.bytes);
    for (let line = 1; line <= 60; line += 1) {
      if (line !== 31) expect(text.match(new RegExp(`Service line ${line}\\s`, 'g'))).toHaveLength(1);
    }
    for (const word of long.split(' ')) expect(text.match(new RegExp(`\\b${word}\\b`, 'g'))).toHaveLength(1);
    expect(text).toMatch(/Amount due\s+\$600\.00/);
    for (let page = 1; page <= pages; page += 1) {
      const pageText = await pdfText(res.bytes, page);
      expect(pageText).toContain(`Page ${page} of ${pages}`);
      if (pageText.includes('Service line')) expect(pageText).toMatch(/DESCRIPTION\s+QTY\s+UNIT PRICE\s+AMOUNT/);
    }
    await renderPdf(res.bytes, 'invoice-long');
  });

  test('when the client\'s address is 1000 characters of short lines, then every line is printed, carrying on over the page', async () => {
    const lines = Array.from({ length: 200 }, (_, index) => `A${String(index).padStart(3, '0')}`);
    const client = (await ctx.t.api.post('/clients', aClient({ address: lines.join('\n').slice(0, 1000) }))).body.client;
    const invoice = (await ctx.t.api.post('/invoices', { client_id: client.id, currency: 'USD', due_date: '2099-12-31', items: [{ description: 'Work', quantity: 1, unit_price: 5 }] })).body.invoice;

    const res = await download(ctx.t, invoice.id);

    const text = await pdfText(res.bytes);
    for (const line of client.address.split('\n')) expect(text).toMatch(new RegExp(`^\\s*${line}(\\s|$)`, 'm'));
    expect(text).toMatch(/Work\s+1\s+\$5\.00\s+\$5\.00/);
    expect(Number((await pdfInfo(res.bytes)).Pages)).toBeGreaterThanOrEqual(4);
  });

  test('when a single word is wider than the column, then it is cut at the edge and nothing is lost', async () => {
    const reference = `REF-${'0123456789'.repeat(12)}`;
    const invoice = await aDraft(ctx.t, { items: [{ description: reference, quantity: 1, unit_price: 1 }] });

    const text = await pdfText((await download(ctx.t, invoice.id)).bytes);

    const cell = text.split('\n').map((line) => line.trim().split(/\s{2,}/)[0]).filter((part) => /^(REF-)?[0-9]+$/.test(part));
    expect(cell.length).toBeGreaterThan(1);
    expect(cell.join('')).toBe(reference);
  });

  test.each([
    ['JPY', 1234, '¥1,234', '¥2,468'],
    ['KWD', 1234.567, 'KWD 1,234.567', 'KWD 2,469.134'],
    ['EUR', 0.5, '€0.50', '€1.00'],
  ])('when the currency is %s, then amounts show its own number of decimals', async (currency, unitPrice, unitText, totalText) => {
    const invoice = await aDraft(ctx.t, { currency, items: [{ description: 'Work', quantity: 2, unit_price: unitPrice }] });

    const text = await pdfText((await download(ctx.t, invoice.id)).bytes);

    expect(text).toContain(`Work`);
    expect(text).toContain(unitText);
    expect(text).toMatch(new RegExp(`Amount due\\s+${totalText.replace(/[.$]/g, '\\$&')}`));
  });

  test.each([
    ['CHF', 2],
    ['KWD', 3],
    ['USD', 2],
  ])('when %s amounts and quantities are the largest allowed, then each is printed whole on its row, never split', async (currency, exponent) => {
    // Arrange: a price near MAX_MINOR_AMOUNT (999 999 999 999 minor units), MAX_QUANTITY, and a four-decimal quantity
    const major = (minor: number) => minor / 10 ** exponent;
    const items = [
      { description: 'Retainer', quantity: 1, unit_price: major(999_989_999_999) },
      { description: 'Units', quantity: 1_000_000, unit_price: major(1) },
      { description: 'Fraction', quantity: 123_456.7891, unit_price: major(1) },
    ];
    const invoice = await aDraft(ctx.t, { currency, items });
    const money = (minor: number) => formatMoney(minor, currency).replace(/[.$]/g, '\\$&').replace(/\s/g, '\\s');

    // Act
    const res = await download(ctx.t, invoice.id);

    // Assert
    const text = await pdfText(res.bytes);
    expect(text).toMatch(new RegExp(`Retainer\\s+1\\s+${money(999_989_999_999)}\\s+${money(999_989_999_999)}\\n`));
    expect(text).toMatch(new RegExp(`Units\\s+1,000,000\\s+${money(1)}\\s+${money(1_000_000)}\\n`));
    expect(text).toMatch(new RegExp(`Fraction\\s+123,456\\.7891\\s+${money(1)}\\s+${money(Math.round(invoice.items[2].amount * 10 ** exponent))}\\n`));
    expect(text).toMatch(new RegExp(`Amount due\\s+${money(Math.round(invoice.total * 10 ** exponent))}\\n`));
    await renderPdf(res.bytes, `invoice-largest-${currency}`);
  });

  test('when names are Turkish, Greek, Chinese, Japanese and Korean, then the text comes back exactly as written', async () => {
    // Arrange
    const business = 'Ayşe Yılmaz Tasarım Stüdyosu';
    const { t, clientId } = await aBusinessNamed(business, { name: 'Γιώργος Παπαδόπουλος', company: '王小明有限公司', address: 'İstiklal Cd. 12\n34433 Beyoğlu/İstanbul' });
    const items = [
      { description: 'Çeviri ve düzenleme — ĞÜŞİÖÇ ğüşıöç', quantity: 1, unit_price: 100 },
      { description: 'Θεσσαλονίκη: μετάφραση', quantity: 1, unit_price: 100 },
      { description: '東京都渋谷区の翻訳作業', quantity: 1, unit_price: 100 },
      { description: '서울특별시 번역', quantity: 1, unit_price: 100 },
    ];
    const invoice = (await t.api.post('/invoices', { client_id: clientId, currency: 'TRY', due_date: '2099-12-31', items })).body.invoice;

    // Act
    const res = await download(t, invoice.id);

    // Assert
    const text = await pdfText(res.bytes);
    for (const expected of [business, 'Γιώργος Παπαδόπουλος', '王小明有限公司', 'İstiklal Cd. 12', '34433 Beyoğlu/İstanbul', ...items.map((item) => item.description)]) {
      expect(text).toContain(expected);
    }
    expect(text).toMatch(/Amount due\s+TRY\s?400\.00/);
    expect((await pdfInfo(res.bytes)).Title).toBe(`Invoice Draft from ${business}`);
    await renderPdf(res.bytes, 'invoice-unicode');
  });

  test('when another business asks, or a key lacks invoices:read, then it is a JSON 404 or 403 and no PDF', async () => {
    const invoice = await aDraft(ctx.t);
    const other = await ctx.app.tenant();
    const writeOnly = await ctx.app.tenant({ businessId: ctx.t.businessId, scopes: ['clients:read'] });

    const foreign = await other.api.get(`/invoices/${invoice.id}/pdf`);
    const unscoped = await writeOnly.api.get(`/invoices/${invoice.id}/pdf`);

    expect(foreign.status).toBe(404);
    expect(foreign.headers.get('content-type')).toMatch(/^application\/json/);
    expect(foreign.body.error).toBe('not_found');
    expect(unscoped.status).toBe(403);
    expect(unscoped.body).toMatchObject({ error: 'forbidden', required_scope: 'invoices:read' });
  });
});
