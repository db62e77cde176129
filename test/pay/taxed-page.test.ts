/**
 * The payment page of a taxed invoice over HTTP (contract, "Tax" and "Legal identity"): the seller's
 * legal block and the buyer, a row per rate, the rounding, and the reverse-charge or exemption text;
 * every amount as the invoice has it.
 */
import { aClient, Tenant, useApp } from '../support/app';

const ctx = useApp({ rateLimitPerMinute: 100_000 });

async function aRate(t: Tenant, body: Record<string, unknown>): Promise<number> {
  const res = await t.api.post('/tax-rates', body);
  if (res.status !== 201) throw new Error(`could not create a tax rate: ${res.status} ${res.text}`);
  return res.body.tax_rate.id;
}

/** The page of a new issued invoice for a new client: its HTML with the tags taken out, one space between words. */
async function pageOf(t: Tenant, client: Record<string, unknown>, invoice: Record<string, unknown>): Promise<{ text: string; invoice: any }> {
  const clientId = (await t.api.post('/clients', aClient(client))).body.client.id;
  const created = await t.api.post('/invoices', { client_id: clientId, currency: 'EUR', due_date: '2099-12-31', ...invoice });
  if (created.status !== 201) throw new Error(`could not create an invoice: ${created.status} ${created.text}`);
  const url = new URL((await t.api.post(`/invoices/${created.body.invoice.id}/initiate-payment`)).body.payment_url);
  const html = await (await fetch(`${ctx.app.url}${url.pathname}`)).text();
  const text = html
    .replace(/<br>/g, '\n')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/[^\S\n]+/g, ' ')
    .replace(/ ?\n ?/g, '\n');
  return { text, invoice: (await t.api.get(`/invoices/${created.body.invoice.id}`)).body.invoice };
}

const line = (description: string, unit_price: number) => ({ description, quantity: 1, unit_price });

describe('the payment page of a taxed invoice', () => {
  test('when the buyer is under reverse charge, then the page shows the rate at 0 %, the reverse-charge text and the buyer\'s VAT ID', async () => {
    const t = await ctx.app.tenant();
    const vat = await aRate(t, { display_name: 'VAT', percentage: 19 });

    const { text } = await pageOf(t, { name: 'Camille Martin', country: 'FR', tax_id: 'FR40303265045', tax_exempt: 'reverse' }, { items: [line('Consulting', 1000)], default_tax_rate_ids: [vat] });

    expect(text).toContain('VAT 0 % on €1,000.00 €0.00');
    expect(text).toContain('Reverse charge: VAT to be accounted for by the recipient');
    expect(text).toContain("Recipient's VAT ID: FR40303265045");
    expect(text).toMatch(/Amount due €1,000\.00/);
  });

  test.each([
    ['an exempt buyer', { tax_exempt: 'exempt' }, { percentage: 19 }, 'Exempt'],
    ['an exempt rate', {}, { percentage: 0, category: 'E', exemption_reason: 'Exempt under Art. 132(1)(j) VAT Directive' }, 'Exempt under Art. 132(1)(j) VAT Directive'],
  ])('when the tax is 0 because of %s, then the page gives the exemption reason', async (_case, client, rate, reason) => {
    const t = await ctx.app.tenant();
    const id = await aRate(t, { display_name: 'VAT', ...rate });

    const { text } = await pageOf(t, { name: 'Tuition Client', ...client }, { items: [line('Tuition', 300)], default_tax_rate_ids: [id] });

    expect(text).toContain('VAT 0 % on €300.00 €0.00');
    expect(text.split('\n').map((part) => part.trim())).toContain(reason);
    expect(text).not.toContain('Reverse charge');
  });

  test('when prices include 19 %, then the page shows the subtotal excluding tax, the tax and the rounding, as the invoice has them', async () => {
    const t = await ctx.app.tenant();
    const vat = await aRate(t, { display_name: 'VAT', percentage: 19, inclusive: true });

    const { text, invoice } = await pageOf(t, { name: 'Shop Client' }, { items: [line('Mug', 9.99), line('Cap', 9.99), line('Pen', 9.99)], default_tax_rate_ids: [vat] });

    // Each 9.99 holds 8.39 net; 25.17 × 19 % = 4.78; 29.97 − (25.17 + 4.78) = 0.02.
    expect(invoice).toMatchObject({ total_excluding_tax: 25.17, total_tax: 4.78, rounding_amount: 0.02, total: 29.97 });
    expect(text).toContain('Subtotal €25.17');
    expect(text).toContain('VAT 19 % on €25.17 €4.78');
    expect(text).toContain('Rounding €0.02');
    expect(text).toContain('Total €29.97');
  });

  test('when a reverse-charge buyer is billed without any rate, then the page still says the recipient accounts for the VAT', async () => {
    const { text } = await pageOf(ctx.t, { tax_exempt: 'reverse', country: 'FR', tax_id: 'FR40303265045' }, { items: [{ description: 'Consulting', quantity: 1, unit_price: 500 }] });

    expect(text).toContain('Reverse charge: VAT to be accounted for by the recipient');
    expect(text).toContain('FR40303265045');
  });

  test('when an invoice has no rate, then the page has no tax column and no subtotal, and still names both parties', async () => {
    const t = await ctx.app.tenant();

    const { text } = await pageOf(t, { name: 'Plain Client', address: '1 Main St\nSuite 2', city: 'Springfield', postal_code: '62701', state: 'IL', country: 'US' }, { items: [line('Work', 100)] });

    expect(text).toMatch(/Description Qty Unit price Amount/);
    expect(text).not.toMatch(/Subtotal|Rounding|\bTax\b/);
    expect(text).toMatch(/From Test Business\nUnited States Bill to Plain Client\n1 Main St\nSuite 2\n62701 Springfield\nIL\nUnited States\n/);
  });
});
