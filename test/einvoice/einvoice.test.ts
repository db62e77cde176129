/**
 * Invoices and credit notes as EN 16931 e-invoices over HTTP (contract, "E-invoices"): a varied set
 * of issued invoices (several rates, reverse charge, exempt, zero-rated, inclusive prices, a rounding
 * amount, a discount line, JPY, KWD, control characters, a large quantity, 60 lines, partly paid)
 * and credit notes (part of an invoice, a cancellation, a goodwill line, JPY) fetched as UBL, CII,
 * XRechnung UBL and XRechnung CII, written to test/output/einvoice/ and checked together by the
 * official rules (../shared/einvoice/validate: CEN EN 16931 for every one, Peppol BIS Billing 3.0 for
 * UBL, KoSIT's XRechnung for XRechnung); each document's totals are the API's. The readiness errors
 * of an empty business profile and of a draft are tested too.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { aClient, Tenant, useApp } from '../support/app';
import { aSeller as aSellerOf, BUYER, created, issued as issuedInvoice, line, VALIDATOR } from './support';

const ctx = useApp({ rateLimitPerMinute: 100_000 });
const OUTPUT = path.join(__dirname, '..', 'output', 'einvoice', process.env.TEST_DB ?? 'sqlite');

const aSeller = (currency = 'EUR') => aSellerOf(ctx.app, currency);

/** An issued invoice of `t` for a new client, with the tenant that reads it. */
async function issued(t: Tenant, invoice: Record<string, unknown>, client: Record<string, unknown> = {}): Promise<{ t: Tenant; invoice: any }> {
  return { t, invoice: await issuedInvoice(t, invoice, client) };
}

/** A document of the set: an invoice, or a credit note (`invoice` is then the credit note). */
type SetEntry = { t: Tenant; invoice: any; creditNote?: true };

/** The set of invoices and credit notes every format is checked on, by name. */
async function theSet(): Promise<Record<string, SetEntry>> {
  const t = await aSeller();
  const rate = (body: Record<string, unknown>) => created(t, '/tax-rates', { display_name: 'VAT', ...body }, 'tax_rate').then((r) => r.id as number);
  const [standard, reduced, zero, exempt, inclusive] = await Promise.all([
    rate({ percentage: 19 }),
    rate({ display_name: 'VAT reduced', percentage: 7 }),
    rate({ display_name: 'Zero rated', percentage: 0, category: 'Z' }),
    rate({ display_name: 'Exempt', percentage: 0, category: 'E', exemption_reason: 'Exempt under §4 Nr. 21 UStG' }),
    rate({ display_name: 'VAT incl.', percentage: 19, inclusive: true }),
  ]);
  const jpy = await aSeller('JPY');
  const jpyRate = await created(jpy, '/tax-rates', { display_name: 'Consumption tax', percentage: 10 }, 'tax_rate');
  const kwd = await aSeller('KWD');
  const kwdRate = await created(kwd, '/tax-rates', { display_name: 'VAT', percentage: 5 }, 'tax_rate');
  const set: Record<string, SetEntry> = {
    'several-rates': await issued(t, { items: [line('Book', 20, { tax_rate_ids: [reduced] }), line('Design work', 1234.56, { quantity: 3 }), line('Export', 50, { tax_rate_ids: [zero] })], default_tax_rate_ids: [standard] }),
    'reverse-charge': await issued(t, { items: [line('Consulting', 800)], default_tax_rate_ids: [standard] }, { tax_exempt: 'reverse' }),
    exempt: await issued(t, { items: [line('Course', 300)], default_tax_rate_ids: [exempt] }),
    inclusive: await issued(t, { items: [line('Lamp', 19.99), line('Cable', 4.99, { quantity: 3 })], default_tax_rate_ids: [inclusive] }),
    // A shop's total a cent off its lines: BT-114.
    rounding: await issued(t, { items: [line('Service', 10)], default_tax_rate_ids: [standard], rounding_amount: 0.01 }),
    'discount-line': await issued(t, { items: [line('Chair', 129.9, { quantity: 2 }), line('Loyalty discount', -10)], default_tax_rate_ids: [standard] }),
    jpy: await issued(jpy, { currency: 'JPY', items: [line('Tea set', 4800), line('Shipping', 800)], default_tax_rate_ids: [jpyRate.id] }),
    // Three decimals whose amounts end in 0: written with two.
    kwd: await issued(kwd, { currency: 'KWD', items: [line('Service', 12.5), line('Travel', 3.25, { quantity: 2 })], default_tax_rate_ids: [kwdRate.id] }),
    // XML 1.0 cannot carry a control character: it is left out.
    'control-characters': await issued(t, { notes: 'Thanks\u0007 for your order', items: [line('Tea\u000c set', 30)], default_tax_rate_ids: [standard] }),
    // A net price of 0.0084033613…: quantity × price still makes the line (PEPPOL-EN16931-R120).
    'large-quantity': await issued(t, { items: [line('Screws', 0.01, { quantity: 100000 })], default_tax_rate_ids: [inclusive] }),
    '60-lines': await issued(t, { items: Array.from({ length: 60 }, (_, i) => line(`Item ${i + 1}`, 1.05 + i, { quantity: (i % 4) + 1 })), default_tax_rate_ids: [standard] }),
    'zero-total': await issued(t, { items: [line('Trial month', 100), line('Trial discount', -100)], default_tax_rate_ids: [standard] }),
    // Two German parties: Peppol's German rules (DE-R-*) apply to the UBL.
    'domestic-german': await issued(t, { items: [line('Beratung', 950)], default_tax_rate_ids: [standard] }, {
      company: 'Beispiel AG', address: 'Marienplatz 1', city: 'München', postal_code: '80331', country: 'DE', tax_id: 'DE811128135', peppol_id: '9930:DE811128135',
    }),
  };
  // Not subject to VAT (category O): neither party names a VAT identifier (BR-O-02).
  const unregistered = await aSellerOf(ctx.app, 'EUR', { tax_id: null });
  const notSubject = await created(unregistered, '/tax-rates', { display_name: 'Not subject to VAT', percentage: 0, category: 'O', exemption_reason: 'Not subject to VAT' }, 'tax_rate');
  set['not-subject'] = await issued(unregistered, { items: [line('Garden work', 240)], default_tax_rate_ids: [notSubject.id] }, { tax_id: null });
  const partly = await issued(t, { items: [line('Retainer', 1000)], default_tax_rate_ids: [standard] });
  const paid = await t.api.post(`/invoices/${partly.invoice.id}/payments`, { amount: 400, method: 'bank_transfer', reference: 'SEPA-1' });
  if (paid.status !== 201) throw new Error(`payment: ${paid.status} ${paid.text}`);
  set['partly-paid'] = { t, invoice: paid.body.invoice };

  const credited = async (t: Tenant, invoice: any, body: Record<string, unknown>): Promise<SetEntry> => ({ t, creditNote: true, invoice: (await created(t, `/invoices/${invoice.id}/credit-notes`, body, 'credit_note')) });
  const severalRates = set['several-rates'].invoice;
  set['credit-note-part'] = await credited(t, severalRates, { items: [{ invoice_item_id: severalRates.items[1].id, quantity: 1 }], reason: 'product_unsatisfactory', memo: 'One design revision not delivered' });
  set['credit-note-goodwill'] = await credited(t, paid.body.invoice, { items: [line('Goodwill', 50, { tax_rate_ids: [standard] })], refund: false });
  set['credit-note-jpy'] = await credited(jpy, set.jpy.invoice, { items: [{ invoice_item_id: set.jpy.invoice.items[1].id }] });
  const cancelled = await issued(t, { items: [line('Lamp', 19.99, { quantity: 2 })], default_tax_rate_ids: [inclusive] });
  const voided = await t.api.post(`/invoices/${cancelled.invoice.id}/void`);
  if (voided.status !== 200) throw new Error(`void: ${voided.status} ${voided.text}`);
  set['credit-note-cancellation'] = { t, creditNote: true, invoice: voided.body.credit_note };
  const reverseCharge = set['reverse-charge'].invoice;
  set['credit-note-reverse-charge'] = await credited(t, reverseCharge, { items: [{ invoice_item_id: reverseCharge.items[0].id, quantity: 0.5 }] });
  // Every line of the invoice, its discount line too.
  const discounted = set['discount-line'].invoice;
  set['credit-note-discount-line'] = await credited(t, discounted, { items: discounted.items.map((item: any) => ({ invoice_item_id: item.id })) });
  set['credit-note-kwd'] = await credited(kwd, set.kwd.invoice, { items: [line('Goodwill', 2, { tax_rate_ids: [kwdRate.id] })] });
  set['credit-note-not-subject'] = await credited(unregistered, set['not-subject'].invoice, { items: [line('Goodwill', 40, { tax_rate_ids: [notSubject.id] })] });
  return set;
}

const FORMATS = ['ubl', 'cii', 'xrechnung-ubl', 'xrechnung-cii'] as const;

/** The validator's verdict on each file (`valid`, or the fatal rule ids), or null when ../shared is not here. */
async function officialVerdicts(rules: string, files: string[]): Promise<Map<string, string> | null> {
  if (!fs.existsSync(VALIDATOR)) return null;
  const tsv = path.join(OUTPUT, `${rules}.tsv`);
  await promisify(execFile)('bash', [VALIDATOR, '--rules', rules, '--tsv', tsv, ...files], { timeout: 180_000 }).catch((err: { code?: number }) => {
    if (err.code !== 1) throw err; // 1: some file is invalid, reported in the TSV
  });
  return new Map(
    fs.readFileSync(tsv, 'utf8').trim().split('\n').map((row) => {
      const [file, verdict, fatal] = row.split('\t');
      return [path.basename(file), verdict === 'valid' ? 'valid' : `invalid: ${fatal}`];
    }),
  );
}

/** The text of the first element named `name` in `xml`. */
const textOf = (xml: string, name: string) => new RegExp(`<${name}[^>]*>([^<]+)</${name}>`).exec(xml)?.[1];

/** Each `name` element's content. */
const blocksOf = (xml: string, name: string) => [...xml.matchAll(new RegExp(`<${name}>([\\s\\S]*?)</${name}>`, 'g'))].map((match) => match[1]);

/**
 * The document's totals (BT-106, BT-109, BT-110, BT-112, BT-113, BT-114, BT-115) and VAT breakdown
 * (BG-23) are the API's figures, to the minor unit: computed here from the invoice's or credit
 * note's own amounts, in minor units, and compared with the document's text.
 */
function expectTheApiFigures(xml: string, ubl: boolean, figures: any): void {
  const exponent = { JPY: 0, KWD: 3 }[figures.currency as string] ?? 2;
  const minor = (amount: number) => Math.round(amount * 10 ** exponent);
  const written = (amount: number) => (amount / 10 ** exponent).toFixed(Math.min(exponent, 2));
  const paid = minor(figures.amount_paid ?? 0);
  const expected = {
    lines: written(figures.items.reduce((sum: number, item: any) => sum + minor(item.amount_excluding_tax), 0)),
    excludingTax: written(minor(figures.total_excluding_tax)),
    tax: written(minor(figures.total_tax)),
    includingTax: written(minor(figures.total_excluding_tax) + minor(figures.total_tax)),
    paid: paid ? written(paid) : undefined,
    rounding: minor(figures.rounding_amount) ? written(minor(figures.rounding_amount)) : undefined,
    payable: written(minor(figures.total) - paid),
  };
  const summation = blocksOf(xml, ubl ? 'cac:LegalMonetaryTotal' : 'ram:SpecifiedTradeSettlementHeaderMonetarySummation')[0];
  const names = ubl
    ? { lines: 'cbc:LineExtensionAmount', excludingTax: 'cbc:TaxExclusiveAmount', includingTax: 'cbc:TaxInclusiveAmount', paid: 'cbc:PrepaidAmount', rounding: 'cbc:PayableRoundingAmount', payable: 'cbc:PayableAmount' }
    : { lines: 'ram:LineTotalAmount', excludingTax: 'ram:TaxBasisTotalAmount', includingTax: 'ram:GrandTotalAmount', paid: 'ram:TotalPrepaidAmount', rounding: 'ram:RoundingAmount', payable: 'ram:DuePayableAmount' };
  const actual = {
    ...Object.fromEntries(Object.entries(names).map(([total, name]) => [total, textOf(summation, name)])),
    tax: textOf(ubl ? xml : summation, ubl ? 'cbc:TaxAmount' : 'ram:TaxTotalAmount'),
  };
  expect(actual).toEqual(expected);

  // BG-23: one entry per category and rate, the API's entries merged.
  const merged = new Map<string, { taxable: number; tax: number }>();
  for (const rate of figures.tax_breakdown) {
    const key = `${rate.category} ${rate.percentage}`;
    const entry = merged.get(key) ?? { taxable: 0, tax: 0 };
    merged.set(key, { taxable: entry.taxable + minor(rate.taxable_amount), tax: entry.tax + minor(rate.tax_amount) });
  }
  const expectedBreakdown = [...merged].map(([key, { taxable, tax }]) => `${key} ${written(taxable)} ${written(tax)}`).sort();
  const entries = ubl ? blocksOf(xml, 'cac:TaxSubtotal') : blocksOf(blocksOf(xml, 'ram:ApplicableHeaderTradeSettlement')[0], 'ram:ApplicableTradeTax');
  const breakdown = entries.map((entry) =>
    ubl
      ? `${textOf(entry, 'cbc:ID')} ${Number(textOf(entry, 'cbc:Percent'))} ${textOf(entry, 'cbc:TaxableAmount')} ${textOf(entry, 'cbc:TaxAmount')}`
      : `${textOf(entry, 'ram:CategoryCode')} ${Number(textOf(entry, 'ram:RateApplicablePercent'))} ${textOf(entry, 'ram:BasisAmount')} ${textOf(entry, 'ram:CalculatedAmount')}`,
  );
  expect(breakdown.sort()).toEqual(expectedBreakdown);
}

test('when a varied set of issued invoices and credit notes is fetched in each format, then every document passes the official rules and carries the API\'s totals', async () => {
  const set = await theSet();
  fs.mkdirSync(OUTPUT, { recursive: true });
  const written = Object.fromEntries([...FORMATS, 'facturx'].map((format) => [format, [] as string[]])) as Record<(typeof FORMATS)[number] | 'facturx', string[]>;

  for (const [name, { t, invoice, creditNote }] of Object.entries(set)) {
    for (const format of FORMATS) {
      const res = await t.api.get(`/${creditNote ? 'credit-notes' : 'invoices'}/${invoice.id}/einvoice?format=${format}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/xml/);
      const xml = res.text;
      const file = path.join(OUTPUT, `${name}.${format}.xml`);
      fs.writeFileSync(file, xml);
      written[format].push(file);
      const ubl = format.endsWith('ubl');
      // A credit note's amount due is its total: nothing of it was paid.
      expectTheApiFigures(xml, ubl, invoice);
      if (creditNote) {
        // It is a credit note, and names the invoice it corrects.
        expect(xml).toContain(ubl ? '<cbc:CreditNoteTypeCode>381</cbc:CreditNoteTypeCode>' : '<ram:TypeCode>381</ram:TypeCode>');
        expect(xml).toMatch(ubl ? /<cac:InvoiceDocumentReference>\s*<cbc:ID>INV-\d+<\/cbc:ID>/ : /<ram:InvoiceReferencedDocument>\s*<ram:IssuerAssignedID>INV-\d+</);
      }
    }
    // Factur-X embeds the cii document (facturx.test.ts compares them): its PDF goes to the CEN rules too.
    const pdf = await t.api.get(`/${creditNote ? 'credit-notes' : 'invoices'}/${invoice.id}/einvoice?format=facturx`);
    expect(pdf.status).toBe(200);
    const file = path.join(OUTPUT, `${name}.facturx.pdf`);
    fs.writeFileSync(file, pdf.bytes);
    written.facturx.push(file);
  }

  const verdicts = [
    await officialVerdicts('en16931', [...written.ubl, ...written.cii, ...written.facturx]),
    await officialVerdicts('peppol', written.ubl),
    await officialVerdicts('xrechnung', [...written['xrechnung-ubl'], ...written['xrechnung-cii']]),
  ];
  if (verdicts.includes(null)) {
    process.stderr.write('../shared/einvoice/validate is not here: the documents were not checked by the official rules\n');
    return;
  }
  for (const verdict of verdicts) expect(Object.fromEntries(verdict!)).toEqual(Object.fromEntries([...verdict!.keys()].map((file) => [file, 'valid'])));
}, 240_000);

test('when a business has no legal identity, then its invoice is not ready, and the errors name every field with its rule', async () => {
  const t = await ctx.app.tenant();
  const buyer = await created(t, '/clients', aClient(), 'client');
  const draft = await created(t, '/invoices', { client_id: buyer.id, due_date: '2027-01-31', items: [line('Work', 100)] }, 'invoice');

  const asDraft = await t.api.get(`/invoices/${draft.id}/einvoice?format=ubl`);
  await t.api.post(`/invoices/${draft.id}/initiate-payment`);
  const asIssued = await t.api.get(`/invoices/${draft.id}/einvoice?format=cii`);
  const unknown = await t.api.get(`/invoices/${draft.id}/einvoice?format=pdf`);
  const asXrechnung = await t.api.get(`/invoices/${draft.id}/einvoice?format=xrechnung-cii`);

  expect(asDraft.status).toBe(422);
  expect(asDraft.body.error).toBe('einvoice_not_ready');
  // The business was made with a name and a country only; the client without an address.
  expect(Object.keys(asDraft.body.errors).sort()).toEqual(['business.peppol_id', 'business.tax_id', 'buyer_reference', 'client.country', 'client.peppol_id', 'items[0].tax_rate_ids']);
  expect(asDraft.body.errors['items[0].tax_rate_ids'][0]).toMatch(/^BR-CO-04: /);
  expect(asIssued.status).toBe(422);
  expect(Object.keys(asIssued.body.errors).sort()).toEqual(['buyer.country', 'items[0].tax_rate_ids', 'seller.tax_id']);
  expect(asIssued.body.errors['seller.tax_id'][0]).toMatch(/^BR-CO-26: /);
  expect(unknown.status).toBe(400);
  // XRechnung also asks how to reach and pay the seller, where the buyer is, and the buyer's reference.
  expect(asXrechnung.status).toBe(422);
  expect(Object.keys(asXrechnung.body.errors).sort()).toEqual([
    'buyer.city', 'buyer.country', 'buyer.postal_code', 'buyer_reference', 'items[0].tax_rate_ids',
    'seller.city', 'seller.email', 'seller.iban', 'seller.phone', 'seller.postal_code', 'seller.tax_id',
  ]);
  expect(asXrechnung.body.errors.buyer_reference[0]).toMatch(/^BR-DE-15: /);
});

test('when a ready invoice is still a draft, or was voided as a draft, then it is refused as never issued', async () => {
  const t = await aSeller();
  const rate = await created(t, '/tax-rates', { display_name: 'VAT', percentage: 19 }, 'tax_rate');
  const buyer = await created(t, '/clients', aClient(BUYER), 'client');
  const draft = await created(t, '/invoices', { client_id: buyer.id, due_date: '2027-01-31', buyer_reference: 'R-1', items: [line('Work', 100)], default_tax_rate_ids: [rate.id] }, 'invoice');

  const res = await t.api.get(`/invoices/${draft.id}/einvoice?format=ubl`);
  await t.api.post(`/invoices/${draft.id}/void`);
  const voided = await t.api.get(`/invoices/${draft.id}/einvoice?format=ubl`);

  expect(res.status).toBe(422);
  expect(res.body.error).toBe('invalid_state');
  // A draft voided before it was issued was never an invoice either.
  expect(voided.status).toBe(422);
  expect(voided.body.error).toBe('invalid_state');
});

test('when a party\'s Peppol ID has a scheme the rules do not know, then no format serves it, and Peppol refuses a scheme it does not accept yet', async () => {
  const t = await aSeller();
  const rate = await created(t, '/tax-rates', { display_name: 'VAT', percentage: 19 }, 'tax_rate');
  // 1234 is on no list; 0244 is on the CEF list, which Peppol's rules do not take yet.
  const unknown = await issuedInvoice(t, { items: [line('Work', 100)], default_tax_rate_ids: [rate.id] }, { peppol_id: '1234:ABC' });
  const notPeppol = await issuedInvoice(t, { items: [line('Work', 100)], default_tax_rate_ids: [rate.id] }, { peppol_id: '0244:ABC' });

  const [unknownCii, notPeppolUbl, notPeppolCii] = await Promise.all([
    t.api.get(`/invoices/${unknown.id}/einvoice?format=cii`),
    t.api.get(`/invoices/${notPeppol.id}/einvoice?format=ubl`),
    t.api.get(`/invoices/${notPeppol.id}/einvoice?format=cii`),
  ]);

  expect(unknownCii.status).toBe(422);
  expect(unknownCii.body.errors['buyer.peppol_id'][0]).toMatch(/^BR-CL-25: /);
  expect(notPeppolUbl.status).toBe(422);
  expect(notPeppolUbl.body.errors['buyer.peppol_id'][0]).toMatch(/^PEPPOL-EN16931-CL008: /);
  expect(notPeppolCii.status).toBe(200);
});

test('when text holds only characters XML cannot carry, or a credit note\'s amounts need three decimals, then the document is refused with the rule, never written broken', async () => {
  const t = await aSeller();
  const rate = await created(t, '/tax-rates', { display_name: 'VAT', percentage: 19 }, 'tax_rate');
  const controlOnly = await issuedInvoice(t, { buyer_reference: '\u0001', items: [line('\u0007', 100)], default_tax_rate_ids: [rate.id] });
  const kwd = await aSeller('KWD');
  const kwdRate = await created(kwd, '/tax-rates', { display_name: 'VAT', percentage: 5 }, 'tax_rate');
  const kwdInvoice = await issuedInvoice(kwd, { currency: 'KWD', items: [line('Service', 10)], default_tax_rate_ids: [kwdRate.id] });
  const kwdCredit = await created(kwd, `/invoices/${kwdInvoice.id}/credit-notes`, { items: [line('Goodwill', 1.235, { tax_rate_ids: [kwdRate.id] })] }, 'credit_note');

  const asXrechnung = await t.api.get(`/invoices/${controlOnly.id}/einvoice?format=xrechnung-cii`);
  const asCii = await kwd.api.get(`/credit-notes/${kwdCredit.id}/einvoice?format=cii`);

  expect(asXrechnung.status).toBe(422);
  expect(asXrechnung.body.errors['items[0].description'][0]).toMatch(/^BR-25: /);
  expect(asXrechnung.body.errors.buyer_reference[0]).toMatch(/^BR-DE-15: /);
  expect(asCii.status).toBe(422);
  expect(asCii.body.message).toMatch(/credit note/);
  expect(asCii.body.errors.currency[0]).toMatch(/^BR-DEC-/);
});

test('when the buyer is in Northern Ireland, then its XI VAT identifier is one EN 16931 accepts', async () => {
  const t = await aSeller();
  const rate = await created(t, '/tax-rates', { display_name: 'VAT', percentage: 19 }, 'tax_rate');
  const invoice = await issuedInvoice(t, { items: [line('Work', 100)], default_tax_rate_ids: [rate.id] }, { country: 'GB', tax_id: 'XI123456789', city: 'Belfast', postal_code: 'BT1 1AA', peppol_id: null });

  const res = await t.api.get(`/invoices/${invoice.id}/einvoice?format=cii`);

  expect(res.status).toBe(200);
  expect(res.text).toContain('<ram:ID schemeID="VA">XI123456789</ram:ID>');
});

test('when a buyer\'s GLN has a wrong check digit, then Peppol UBL refuses it (PEPPOL-COMMON-R040), and CII, which does not check it, serves it', async () => {
  const t = await aSeller();
  const rate = await created(t, '/tax-rates', { display_name: 'VAT', percentage: 19 }, 'tax_rate');
  const invoice = await issuedInvoice(t, { items: [line('Work', 100)], default_tax_rate_ids: [rate.id] }, { peppol_id: '0088:7300010000002' });

  const [ubl, cii] = await Promise.all([t.api.get(`/invoices/${invoice.id}/einvoice?format=ubl`), t.api.get(`/invoices/${invoice.id}/einvoice?format=cii`)]);

  expect(ubl.status).toBe(422);
  expect(ubl.body.errors['buyer.peppol_id'][0]).toMatch(/^PEPPOL-COMMON-R040: /);
  expect(cii.status).toBe(200);
});
