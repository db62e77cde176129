/**
 * Received e-invoices as expenses over HTTP (contract, "E-invoices", Receiving): UBL and CII made by
 * the API itself, its Factur-X PDF, a PDF made here with an attachment of its own, and the official
 * examples (when ../shared is here). One document is one expense, also when two imports race; hostile
 * and malformed documents get a clear 4xx and write nothing; Idempotency-Key replays the same bytes;
 * the CLI imports a file.
 */
import fs from 'node:fs';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createDeflate, deflateSync, gzipSync } from 'node:zlib';
import PDFDocument from 'pdfkit';
import { DocumentReader } from '../../server/expenses/document-reader';
import { InvalidDocument } from '../../server/expenses/schema';
import { Tenant, useApp } from '../support/app';
import { runCli } from '../support/cli';
import { aSeller, created, issued, line } from '../einvoice/support';

const ctx = useApp({ rateLimitPerMinute: 100_000 });
const EXAMPLES = path.resolve(__dirname, '../../../shared/einvoice/selftest/examples');
const MB = 1024 * 1024;

function importing(t: Tenant, bytes: Buffer | string, type: string = 'application/xml', query = '', headers: Record<string, string> = {}) {
  return t.api.post(`/expenses/import${query}`, undefined, { raw: typeof bytes === 'string' ? Buffer.from(bytes) : bytes, headers: { 'content-type': type, ...headers } });
}

async function expenseCount(t: Tenant): Promise<number> {
  const res = await t.api.get('/expenses?per_page=1');
  return res.body.meta.total;
}

/** A PDF made with PDFKit, carrying `files` as attachments (PDFKit deflates them). */
function aPdf(files: { name: string; content: Buffer }[], options: PDFKit.PDFDocumentOptions = {}): Promise<Buffer> {
  return new Promise((resolve) => {
    const doc = new PDFDocument(options);
    const chunks: Buffer[] = [];
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.text('Invoice');
    for (const file of files) doc.file(file.content, { name: file.name, type: 'text/xml' });
    doc.end();
  });
}

/** An object of a hand-written PDF: its dictionary, and the stream it heads if any (already encoded). */
type PdfObject = string | { dict: string; stream: Buffer };

/** A PDF written by hand: object n is objects[n - 1], the first one the catalog. */
function aPdfOf(objects: PdfObject[]): Buffer {
  const parts: Buffer[] = [];
  const offsets: number[] = [];
  let at = 0;
  const push = (part: Buffer | string) => {
    const bytes = typeof part === 'string' ? Buffer.from(part, 'latin1') : part;
    parts.push(bytes);
    at += bytes.length;
  };
  push('%PDF-1.7\n');
  objects.forEach((object, i) => {
    offsets[i + 1] = at;
    if (typeof object === 'string') {
      push(`${i + 1} 0 obj\n${object}\nendobj\n`);
      return;
    }
    push(`${i + 1} 0 obj\n<< ${object.dict} /Length ${object.stream.length} >>\nstream\n`);
    push(object.stream);
    push('\nendstream\nendobj\n');
  });
  const xref = at;
  push(`xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.slice(1).map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`);
  push(`trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
  return Buffer.concat(parts);
}

/** A PDF written by hand whose one attachment is `stream` (already encoded, with `filter`, which may add other entries such as /DecodeParms). */
function aHandMadePdf(name: string, stream: Buffer, filter = '/FlateDecode'): Buffer {
  return aPdfOf([
    `<< /Type /Catalog /Pages 2 0 R /Names << /EmbeddedFiles << /Names [(${name}) 4 0 R] >> >> >>`,
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>',
    `<< /Type /Filespec /F (${name}) /UF (${name}) /EF << /F 5 0 R >> >>`,
    { dict: `/Type /EmbeddedFile${filter ? ` /Filter ${filter}` : ''}`, stream },
  ]);
}

/** An object stream (/ObjStm) holding `objects` (numbered from `first`), encoded by `encode` under `filter`. */
function anObjectStream(objects: string[], first: number, filter: string, encode: (bytes: Buffer) => Buffer): PdfObject {
  let offset = 0;
  const header = objects.map((object, i) => {
    const entry = `${first + i} ${offset}`;
    offset += object.length + 1;
    return entry;
  }).join(' ') + '\n';
  const content = Buffer.from(header + objects.join('\n'), 'latin1');
  return { dict: `/Type /ObjStm /N ${objects.length} /First ${header.length} /Filter ${filter}`, stream: encode(content) };
}

/** `size` bytes of spaces deflated (about 1/1000 of it), made in chunks: the test process never holds them unpacked. */
async function deflatedSpaces(size: number, prefix = ''): Promise<Buffer> {
  const deflate = createDeflate({ level: 9 });
  const chunks: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise((resolve) => deflate.on('end', resolve));
  const chunk = Buffer.alloc(MB, ' ');
  deflate.write(Buffer.from(prefix, 'latin1'));
  for (let written = 0; written < size; written += chunk.length) {
    if (!deflate.write(chunk)) await new Promise((resolve) => deflate.once('drain', resolve));
  }
  deflate.end();
  await ended;
  return Buffer.concat(chunks);
}

/** Run-length encoded spaces (PDF's RunLengthDecode: each 2 bytes unpack to 128), `size` bytes unpacked. */
function runLengthSpaces(size: number): Buffer {
  const encoded = Buffer.alloc((size / 128) * 2);
  for (let i = 0; i < encoded.length; i += 2) {
    encoded[i] = 129;
    encoded[i + 1] = 0x20;
  }
  return encoded;
}

/** A PDF whose one object stream (holding the page tree) is `stream`, as encoded under `filter`. */
function aPdfWithObjectStream(filter: string, stream: Buffer): Buffer {
  return aPdfOf(['<< /Type /Catalog /Pages 2 0 R >>', { dict: `/Type /ObjStm /N 1 /First 4 /Filter ${filter}`, stream }]);
}

/** The seller (a business of its own) and one issued invoice of it: 2 × 100 + 49.99 at 19 %, and a rounding of 0.01. */
async function anInvoiceOfASeller(): Promise<{ seller: Tenant; invoice: any }> {
  const seller = await aSeller(ctx.app, 'EUR');
  const rate = await created(seller, '/tax-rates', { display_name: 'VAT', percentage: 19 }, 'tax_rate');
  const invoice = await issued(seller, { currency: 'EUR', items: [line('Design work', 100, { quantity: 2 }), line('Hosting', 49.99)], default_tax_rate_ids: [rate.id], rounding_amount: 0.01 });
  return { seller, invoice };
}

async function einvoiceOf(seller: Tenant, invoiceId: number, format: 'ubl' | 'cii' | 'facturx'): Promise<Buffer> {
  const res = await seller.api.get(`/invoices/${invoiceId}/einvoice?format=${format}`);
  if (res.status !== 200) throw new Error(`GET einvoice ${format}: ${res.status} ${res.text}`);
  return res.bytes;
}

/** A buyer: a business of its own that imports what it received. */
const aBuyer = () => ctx.app.tenant({ currency: 'EUR' });

describe('POST /expenses/import of a valid e-invoice', () => {
  test('when a UBL invoice made by the API is imported, then the expense carries its seller, totals, date, number and first line', async () => {
    const { seller, invoice } = await anInvoiceOfASeller();
    const ubl = await einvoiceOf(seller, invoice.id, 'ubl');
    const buyer = await aBuyer();

    const res = await importing(buyer, ubl, 'application/xml', '?category=software');

    expect(res.status).toBe(201);
    expect(res.body.expense).toEqual({
      id: expect.any(Number),
      amount: 297.5,
      currency: 'EUR',
      category: 'software',
      description: `Invoice ${invoice.number}: Design work (and 1 more line)`,
      vendor: 'Muster Design GmbH',
      date: invoice.issue_date,
      notes: null,
      tax_amount: 47.5,
      vendor_tax_id: 'DE123456789',
      document_number: invoice.number,
      livemode: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect([invoice.total, invoice.total_tax]).toEqual([297.5, 47.5]);
    expect((await buyer.api.get(`/expenses/${res.body.expense.id}`)).body.expense).toEqual(res.body.expense);
  });

  test('when a CII invoice with tax and a rounding amount is imported, then the amount is BT-112 + BT-114 and the tax BT-110, to the minor unit', async () => {
    const { seller, invoice } = await anInvoiceOfASeller();
    const cii = await einvoiceOf(seller, invoice.id, 'cii');
    const buyer = await aBuyer();

    const res = await importing(buyer, cii);

    expect(res.status).toBe(201);
    expect(res.body.expense).toMatchObject({
      amount: invoice.total,
      tax_amount: invoice.total_tax,
      currency: 'EUR',
      category: 'other',
      date: invoice.issue_date,
      vendor: 'Muster Design GmbH',
      vendor_tax_id: 'DE123456789',
      document_number: invoice.number,
      description: `Invoice ${invoice.number}: Design work (and 1 more line)`,
    });
    expect(cii.toString()).toMatch(/<ram:RoundingAmount>0.01<\/ram:RoundingAmount>/);
  });

  test('when the API\'s Factur-X PDF is imported, then its factur-x.xml makes the expense', async () => {
    const { seller, invoice } = await anInvoiceOfASeller();
    const pdf = await einvoiceOf(seller, invoice.id, 'facturx');
    const buyer = await aBuyer();

    const res = await importing(buyer, pdf, 'application/pdf');

    expect(res.status).toBe(201);
    expect(res.body.expense).toMatchObject({ amount: invoice.total, tax_amount: invoice.total_tax, document_number: invoice.number, vendor: 'Muster Design GmbH' });
  });

  test('when a PDF carries the invoice as ZUGFeRD-invoice.xml (any case), then it is imported', async () => {
    const { seller, invoice } = await anInvoiceOfASeller();
    const pdf = await aPdf([{ name: 'notes.txt', content: Buffer.from('not this one') }, { name: 'ZUGFeRD-invoice.xml', content: await einvoiceOf(seller, invoice.id, 'cii') }]);
    const buyer = await aBuyer();

    const res = await importing(buyer, pdf, 'application/pdf');

    expect(res.status).toBe(201);
    expect(res.body.expense.document_number).toBe(invoice.number);
  });

  test('when the official CEN, Peppol and XRechnung examples are imported, then each invoice is an expense of its totals and each credit note is refused', async () => {
    if (!fs.existsSync(EXAMPLES)) {
      process.stderr.write('../shared/einvoice/selftest/examples is not here: the official examples were not imported\n');
      return;
    }
    const files = fs.readdirSync(EXAMPLES).flatMap((dir) => fs.readdirSync(path.join(EXAMPLES, dir)).map((file) => path.join(EXAMPLES, dir, file)));
    for (const file of files) {
      const xml = fs.readFileSync(file, 'utf8');
      const buyer = await aBuyer();
      const res = await importing(buyer, xml);
      const creditNote = /<(\w+:)?CreditNote[\s>]/.test(xml);
      if (creditNote) {
        expect([path.basename(file), res.status, res.body.error]).toEqual([path.basename(file), 422, 'unsupported_document']);
        continue;
      }
      expect([path.basename(file), res.status]).toEqual([path.basename(file), 201]);
      const total = /<(?:cbc:TaxInclusiveAmount|ram:GrandTotalAmount)[^>]*>([^<]+)</.exec(xml)![1];
      const rounding = /<(?:cbc:PayableRoundingAmount|ram:RoundingAmount)[^>]*>([^<]+)</.exec(xml)?.[1] ?? '0';
      expect([path.basename(file), res.body.expense.amount]).toEqual([path.basename(file), Math.round((Number(total) + Number(rounding)) * 100) / 100]);
    }
  }, 120_000);

  test('when a PDF keeps its attachment\'s file specification in a compressed object stream, then the attachment is found', async () => {
    const { seller, invoice } = await anInvoiceOfASeller();
    const cii = await einvoiceOf(seller, invoice.id, 'cii');
    const pdf = aPdfOf([
      '<< /Type /Catalog /Pages 2 0 R /Names << /EmbeddedFiles << /Names [(factur-x.xml) 6 0 R] >> >> /AF [6 0 R] >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>',
      { dict: '/Type /EmbeddedFile /Filter /FlateDecode', stream: deflateSync(cii) },
      anObjectStream(['<< /Type /Filespec /F (factur-x.xml) /UF (factur-x.xml) /AFRelationship /Alternative /EF << /F 4 0 R >> >>'], 6, '/FlateDecode', (bytes) => deflateSync(bytes)),
    ]);

    const res = await importing(await aBuyer(), pdf, 'application/pdf');

    expect(res.status).toBe(201);
    expect(res.body.expense).toMatchObject({ amount: invoice.total, document_number: invoice.number });
  });

  test('when an invoice is self-billed (389), corrective (384) or a final construction invoice (877), then it is imported', async () => {
    const { seller, invoice } = await anInvoiceOfASeller();
    const ubl = (await einvoiceOf(seller, invoice.id, 'ubl')).toString();

    const answers = [];
    for (const code of ['389', '384', '877']) answers.push(await importing(await aBuyer(), ubl.replace(/<cbc:InvoiceTypeCode>380</, `<cbc:InvoiceTypeCode>${code}<`)));

    expect(answers.map((res) => res.status)).toEqual([201, 201, 201]);
  });

  test('when the first line\'s name is longer than the description and made of emoji, then it is cut between code points', async () => {
    const { seller, invoice } = await anInvoiceOfASeller();
    const ubl = (await einvoiceOf(seller, invoice.id, 'ubl')).toString();
    // Either parity of where the cut falls: one of them splits a pair when cutting by UTF-16 units.
    const names = ['😀'.repeat(600), `a${'😀'.repeat(600)}`];

    const descriptions = [];
    for (const name of names) {
      const res = await importing(await aBuyer(), ubl.replace('<cbc:Name>Design work</cbc:Name>', `<cbc:Name>${name}</cbc:Name>`));
      expect(res.status).toBe(201);
      descriptions.push(res.body.expense.description as string);
    }

    for (const description of descriptions) {
      expect(description).toMatch(new RegExp(`^Invoice ${invoice.number}: a?(😀)+… \\(and 1 more line\\)$`, 'u'));
      expect(description.length).toBeLessThanOrEqual(1000);
      expect(description).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
    }
  });

  test('when the seller\'s name, the number, the VAT identifier and the line carry control characters and line breaks, then those are left out and each is one line', async () => {
    const { seller, invoice } = await anInvoiceOfASeller();
    const ubl = (await einvoiceOf(seller, invoice.id, 'ubl')).toString();
    // XML 1.0 carries C1 controls (CSI is U+009B) and DEL, literally or as references; ESC it does not.
    const xml = ubl
      .replace('Muster Design GmbH</cbc:RegistrationName>', 'Muster&#x9b;2J\u009b31m Design&#xA;&#x9;GmbH&#x7f;</cbc:RegistrationName>')
      .replace(`<cbc:ID>${invoice.number}</cbc:ID>`, `<cbc:ID>${invoice.number}&#x85;</cbc:ID>`)
      .replace('<cbc:CompanyID>DE123456789</cbc:CompanyID>', '<cbc:CompanyID>DE123&#x9b;456789</cbc:CompanyID>')
      .replace('<cbc:Name>Design work</cbc:Name>', '<cbc:Name>Design&#x9b;0m\nwork</cbc:Name>');
    const buyer = await aBuyer();

    const res = await importing(buyer, xml);

    expect(res.status).toBe(201);
    expect(res.body.expense).toMatchObject({
      vendor: 'Muster2J31m Design GmbH',
      document_number: invoice.number,
      vendor_tax_id: 'DE123456789',
      description: `Invoice ${invoice.number}: Design0m work (and 1 more line)`,
    });
    // The same document as written without them: one expense.
    expect((await importing(buyer, ubl)).status).toBe(409);
  });

  test('when the body is gzip- or deflate-encoded, then it is imported, and under an Idempotency-Key it is the request of its bytes once decoded', async () => {
    const { seller, invoice } = await anInvoiceOfASeller();
    const ubl = await einvoiceOf(seller, invoice.id, 'ubl');
    const buyer = await aBuyer();
    const key = { 'idempotency-key': `import-gzip-${invoice.id}` };

    const gzipped = await importing(buyer, gzipSync(ubl), 'application/xml', '', { ...key, 'content-encoding': 'gzip' });
    const plain = await importing(buyer, ubl, 'application/xml', '', key);
    const deflated = await importing(await aBuyer(), deflateSync(ubl), 'application/xml', '', { 'content-encoding': 'deflate' });

    expect(gzipped.status).toBe(201);
    expect(plain.headers.get('idempotent-replayed')).toBe('true');
    expect(plain.body).toEqual(gzipped.body);
    expect(deflated.status).toBe(201);
  });

  test('when an expense was not imported, then its tax_amount, vendor_tax_id and document_number are null', async () => {
    const res = await ctx.t.api.post('/expenses', { amount: 10, category: 'travel', date: '2026-01-02' });

    expect(res.body.expense).toMatchObject({ tax_amount: null, vendor_tax_id: null, document_number: null });
  });

  test('when an imported expense changes currency, then its tax keeps its major units as the amount does', async () => {
    const { seller, invoice } = await anInvoiceOfASeller();
    const buyer = await aBuyer();
    const { expense } = (await importing(buyer, await einvoiceOf(seller, invoice.id, 'ubl'))).body;

    const res = await buyer.api.patch(`/expenses/${expense.id}`, { currency: 'USD' });

    expect(res.status).toBe(200);
    expect(res.body.expense).toMatchObject({ amount: 297.5, tax_amount: 47.5, currency: 'USD' });
  });
});

describe('POST /expenses/import of the same document again', () => {
  test('when one invoice is imported twice, even as UBL then CII, then the second is 409 duplicate_document naming the first expense', async () => {
    const { seller, invoice } = await anInvoiceOfASeller();
    const buyer = await aBuyer();
    const first = await importing(buyer, await einvoiceOf(seller, invoice.id, 'ubl'));

    const again = await importing(buyer, await einvoiceOf(seller, invoice.id, 'ubl'));
    const asCii = await importing(buyer, await einvoiceOf(seller, invoice.id, 'cii'), 'application/xml', '?category=travel');
    const asPdf = await importing(buyer, await einvoiceOf(seller, invoice.id, 'facturx'), 'application/pdf');

    expect(first.status).toBe(201);
    for (const res of [again, asCii, asPdf]) {
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ error: 'duplicate_document', message: `Invoice ${invoice.number} of Muster Design GmbH was already imported as expense ${first.body.expense.id}`, expense_id: first.body.expense.id });
    }
    expect(await expenseCount(buyer)).toBe(1);
  });

  test('when six imports of one document race, then one expense is made and the others are 409 naming it', async () => {
    const { seller, invoice } = await anInvoiceOfASeller();
    const buyer = await aBuyer();
    const ubl = await einvoiceOf(seller, invoice.id, 'ubl');

    const answers = await Promise.all(Array.from({ length: 6 }, () => importing(buyer, ubl)));

    const made = answers.filter((res) => res.status === 201);
    expect(made).toHaveLength(1);
    expect(answers.filter((res) => res.status === 409).map((res) => res.body.expense_id)).toEqual(Array(5).fill(made[0].body.expense.id));
    expect(await expenseCount(buyer)).toBe(1);
  });

  test('when another business or the other mode imports the document, then it is an expense of theirs too', async () => {
    const { seller, invoice } = await anInvoiceOfASeller();
    const ubl = await einvoiceOf(seller, invoice.id, 'ubl');
    const buyer = await aBuyer();
    const live = await ctx.app.tenant({ businessId: buyer.businessId, mode: 'live' });

    const answers = [await importing(buyer, ubl), await importing(live, ubl), await importing(await aBuyer(), ubl)];

    expect(answers.map((res) => res.status)).toEqual([201, 201, 201]);
  });

  test('when the expense an import met is deleted before the import reads it, then the document is inserted again', async () => {
    const { seller, invoice } = await anInvoiceOfASeller();
    const ubl = await einvoiceOf(seller, invoice.id, 'ubl');
    const buyer = await aBuyer();
    const first = await importing(buyer, ubl);
    // The race, played in order: the import's first read misses the other import's expense (not yet
    // committed), its insert meets that expense's key, and the expense is deleted before the locking read.
    const service = ctx.app.server.services.expenses as any;
    const refuseDuplicate = service.refuseDuplicate;
    service.refuseDuplicate = async (actor: unknown, conn: any, columns: unknown, options?: { latest?: boolean }) => {
      if (!options?.latest) return;
      await conn('expenses').where({ id: first.body.expense.id }).delete();
      return refuseDuplicate.call(service, actor, conn, columns, options);
    };

    let again;
    try {
      again = await importing(buyer, ubl);
    } finally {
      delete service.refuseDuplicate;
    }

    expect(again.status).toBe(201);
    expect(again.body.expense.id).not.toBe(first.body.expense.id);
    expect((await buyer.api.get(`/expenses/${first.body.expense.id}`)).status).toBe(404);
    expect(await expenseCount(buyer)).toBe(1);
  });

  test('when an imported expense is deleted, then its document can be imported again', async () => {
    const { seller, invoice } = await anInvoiceOfASeller();
    const ubl = await einvoiceOf(seller, invoice.id, 'ubl');
    const buyer = await aBuyer();
    const first = await importing(buyer, ubl);
    await buyer.api.delete(`/expenses/${first.body.expense.id}`);

    const again = await importing(buyer, ubl);

    expect(again.status).toBe(201);
  });
});

describe('POST /expenses/import of a document it refuses', () => {
  let seller: Tenant;
  let invoice: any;
  let ubl: string;
  let cii: string;
  let listener: http.Server;
  let fetched: string[];
  let listenerUrl: string;

  beforeAll(async () => {
    ({ seller, invoice } = await anInvoiceOfASeller());
    ubl = (await einvoiceOf(seller, invoice.id, 'ubl')).toString();
    cii = (await einvoiceOf(seller, invoice.id, 'cii')).toString();
    fetched = [];
    listener = http.createServer((req, res) => {
      fetched.push(req.url ?? '');
      res.end('<!ENTITY leak "fetched">');
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    listenerUrl = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => listener.close(() => resolve())));

  /** The UBL with `doctype` before its root element and `id` as its number. */
  const withDoctype = (doctype: string, id = invoice.number) => ubl.replace(/<Invoice /, `${doctype}\n<Invoice `).replace(`<cbc:ID>${invoice.number}</cbc:ID>`, `<cbc:ID>${id}</cbc:ID>`);

  const lols = Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i};`.repeat(10)}">`).join('');
  const hostile: [string, number, string, () => Promise<Buffer | string> | Buffer | string, string, RegExp, Record<string, string>?][] = [
    ['entity expansion (billion laughs)', 422, 'invalid_document', () => withDoctype(`<!DOCTYPE Invoice [<!ENTITY lol0 "lol">${lols}]>`, '&lol9;'), 'application/xml', /DOCTYPE/],
    ['an external entity naming a file (XXE)', 422, 'invalid_document', () => withDoctype('<!DOCTYPE Invoice [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>', '&xxe;'), 'application/xml', /DOCTYPE/],
    ['an external entity on the network (XXE)', 422, 'invalid_document', () => withDoctype(`<!DOCTYPE Invoice [<!ENTITY xxe SYSTEM "${listenerUrl}/entity">]>`, '&xxe;'), 'application/xml', /DOCTYPE/],
    ['an external DTD and parameter entity', 422, 'invalid_document', () => withDoctype(`<!DOCTYPE Invoice SYSTEM "${listenerUrl}/invoice.dtd" [<!ENTITY % remote SYSTEM "${listenerUrl}/remote.dtd"> %remote;]>`), 'application/xml', /DOCTYPE/],
    ['an entity that is not declared', 422, 'invalid_document', () => ubl.replace(`<cbc:ID>${invoice.number}</cbc:ID>`, '<cbc:ID>&nbsp;</cbc:ID>'), 'application/xml', /not well-formed XML: .*undefined entity/],
    ['XML that is not well-formed', 422, 'invalid_document', () => ubl.replace('</cbc:IssueDate>', '</cbc:IssueDat>'), 'application/xml', /not well-formed XML: \d+:\d+: /],
    ['XML cut short', 422, 'invalid_document', () => ubl.slice(0, ubl.length / 2), 'application/xml', /not well-formed XML/],
    ['elements nested 100,000 deep', 422, 'invalid_document', () => `<a>${'<a>'.repeat(100_000)}${'</a>'.repeat(100_000)}</a>`, 'application/xml', /more than 64 deep/],
    ['text that is not UTF-8', 422, 'invalid_document', () => Buffer.concat([Buffer.from(ubl.replace('Hosting', 'H')), Buffer.from([0xff, 0xfe])]), 'application/xml', /not UTF-8/],
    ['a declared encoding other than UTF-8', 422, 'invalid_document', () => ubl.replace(/^<\?xml[^>]*\?>/, '<?xml version="1.0" encoding="ISO-8859-1"?>'), 'application/xml', /ISO-8859-1/],
    ['XML that is not an e-invoice', 422, 'unsupported_document', () => '<?xml version="1.0"?><html><body>Invoice</body></html>', 'application/xml', /root element is html/],
    ['a CII credit note (type code 381)', 422, 'unsupported_document', () => cii.replace(/<ram:TypeCode>380<\/ram:TypeCode>/, '<ram:TypeCode>381</ram:TypeCode>'), 'application/xml', /credit note \(CII type code 381, BT-3\)/],
    ['a UBL invoice with a code that is no invoice\'s', 422, 'unsupported_document', () => ubl.replace(/<cbc:InvoiceTypeCode>380</, '<cbc:InvoiceTypeCode>999<'), 'application/xml', /type code 999/],
    ['an amount with more decimals than the currency has', 422, 'validation_failed', () => ubl.replace(/(<cbc:TaxInclusiveAmount currencyID="EUR">)[^<]+/, '$1297.505'), 'application/xml', /lacks or misstates/],
    ['an e-invoice without a seller name', 422, 'validation_failed', () => ubl.replace(/<cbc:RegistrationName>Muster Design GmbH<\/cbc:RegistrationName>/, ''), 'application/xml', /lacks or misstates/],
    ['a body over 10 MB', 413, 'payload_too_large', () => Buffer.concat([Buffer.from(ubl), Buffer.alloc(10 * MB, ' ')]), 'application/xml', /larger than 10 MB/],
    ['an empty body', 422, 'invalid_document', () => Buffer.alloc(0), 'application/xml', /body is empty/],
    ['another content type', 400, 'bad_request', () => ubl, 'text/plain', /application\/xml or application\/pdf/],
    ['a PDF without an attachment', 422, 'invalid_document', () => aPdf([]), 'application/pdf', /no e-invoice.*no attachment/],
    ['a PDF whose attachment is not an e-invoice', 422, 'invalid_document', () => aPdf([{ name: 'order.xml', content: Buffer.from('<order/>') }]), 'application/pdf', /it has order\.xml/],
    ['a PDF whose factur-x.xml has an external entity', 422, 'invalid_document', () => aPdf([{ name: 'factur-x.xml', content: Buffer.from(withDoctype(`<!DOCTYPE Invoice [<!ENTITY xxe SYSTEM "${listenerUrl}/pdf">]>`, '&xxe;')) }]), 'application/pdf', /^factur-x\.xml: .*DOCTYPE/],
    ['a PDF whose factur-x.xml unpacks to more than 10 MB', 422, 'invalid_document', () => aHandMadePdf('factur-x.xml', deflateSync(Buffer.alloc(12 * MB, ' '))), 'application/pdf', /larger than 10 MB unpacked/],
    ['a PDF whose factur-x.xml is damaged', 422, 'invalid_document', () => aHandMadePdf('factur-x.xml', Buffer.from('not deflated at all')), 'application/pdf', /could not be unpacked/],
    ['a PDF cut short', 422, 'invalid_document', async () => (await einvoiceOf(seller, invoice.id, 'facturx')).subarray(0, 3000), 'application/pdf', /^The PDF/],
    ['bytes that are not a PDF', 422, 'invalid_document', () => ubl, 'application/pdf', /not a PDF/],
    ['a PDF header and garbage', 422, 'invalid_document', () => Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from(Array.from({ length: 200_000 }, (_, i) => (i * 7919) % 251))]), 'application/pdf', /^The PDF is malformed/],
    ['an encrypted PDF', 422, 'invalid_document', async () => aPdf([{ name: 'factur-x.xml', content: Buffer.from(cii) }], { userPassword: 'secret', ownerPassword: 'owner' }), 'application/pdf', /encrypted/],
    ['a PDF whose object stream inflates from 100 KB to 100 MB', 422, 'invalid_document', async () => aPdfWithObjectStream('/FlateDecode', await deflatedSpaces(100 * MB, '2 0 ')), 'application/pdf', /^The PDF unpacks to more than 64 MB/],
    ['a PDF whose object stream unpacks by run-length to 128 MB', 422, 'invalid_document', () => aPdfWithObjectStream('/RunLengthDecode', runLengthSpaces(128 * MB)), 'application/pdf', /^The PDF unpacks to more than 64 MB/],
    ['a PDF whose factur-x.xml is deflated twice ([/FlateDecode /FlateDecode]) from 1 KB to 300 MB', 422, 'invalid_document', async () => aHandMadePdf('factur-x.xml', deflateSync(await deflatedSpaces(300 * MB)), '[/FlateDecode /FlateDecode]'), 'application/pdf', /^The PDF's factur-x\.xml unpacks to more than 64 MB/],
    ['a PDF whose factur-x.xml unpacks by run-length to 128 MB', 422, 'invalid_document', () => aHandMadePdf('factur-x.xml', runLengthSpaces(128 * MB), '/RunLengthDecode'), 'application/pdf', /^The PDF's factur-x\.xml unpacks to more than 64 MB/],
    ['a PDF whose factur-x.xml has DecodeParms and unpacks to 300 MB', 422, 'invalid_document', async () => aHandMadePdf('factur-x.xml', await deflatedSpaces(300 * MB), '/FlateDecode /DecodeParms << /Predictor 1 >>'), 'application/pdf', /larger than 10 MB unpacked/],
    ['a body in a Content-Encoding that is not undone (compress)', 400, 'bad_request', () => ubl, 'application/xml', /^Content-Encoding compress is not supported: send the body as it is, or encoded with gzip, deflate, br$/, { 'content-encoding': 'compress' }],
    ['XML 1.1, whose character references may write control characters', 422, 'invalid_document', () => ubl.replace(/^<\?xml[^>]*\?>/, '<?xml version="1.1" encoding="UTF-8"?>').replace('Muster Design GmbH</cbc:RegistrationName>', 'Muster&#x1b;[2J Design GmbH</cbc:RegistrationName>'), 'application/xml', /declares XML version 1\.1: e-invoices are XML 1\.0/],
    ['an ESC written as a character reference (not XML 1.0)', 422, 'invalid_document', () => ubl.replace('Muster Design GmbH</cbc:RegistrationName>', 'Muster&#x1b;[2J Design GmbH</cbc:RegistrationName>'), 'application/xml', /not well-formed XML: .*malformed character entity/],
    ['a CII factored credit note (type code 396)', 422, 'unsupported_document', () => cii.replace(/<ram:TypeCode>380<\/ram:TypeCode>/, '<ram:TypeCode>396</ram:TypeCode>'), 'application/xml', /credit note \(CII type code 396, BT-3\)/],
    ['a CII self-billed factored credit note (type code 502)', 422, 'unsupported_document', () => cii.replace(/<ram:TypeCode>380<\/ram:TypeCode>/, '<ram:TypeCode>502</ram:TypeCode>'), 'application/xml', /credit note \(CII type code 502, BT-3\)/],
    ['a UBL Invoice coded as a credit note for goods or services (81)', 422, 'unsupported_document', () => ubl.replace(/<cbc:InvoiceTypeCode>380</, '<cbc:InvoiceTypeCode>81<'), 'application/xml', /credit note \(UBL type code 81, BT-3\)/],
    ['a UBL proforma invoice (type code 325)', 422, 'unsupported_document', () => ubl.replace(/<cbc:InvoiceTypeCode>380</, '<cbc:InvoiceTypeCode>325<'), 'application/xml', /is a proforma invoice \(UBL type code 325, BT-3\), not an invoice/],
    ['a UBL request for payment of invoices past due (type code 71)', 422, 'unsupported_document', () => ubl.replace(/<cbc:InvoiceTypeCode>380</, '<cbc:InvoiceTypeCode>71<'), 'application/xml', /request for payment of invoices past due/],
    ['a UBL invoice without a type code (BT-3)', 422, 'validation_failed', () => ubl.replace(/<cbc:InvoiceTypeCode>380<\/cbc:InvoiceTypeCode>/, ''), 'application/xml', /lacks or misstates/],
  ];

  test.each(hostile)('when the body is %s, then it is a clear %i %s and nothing is written', async (_what, status, error, make, type, message, headers = {}) => {
    const buyer = await aBuyer();
    const before = await expenseCount(buyer);

    const res = await importing(buyer, await make(), type, '', headers);

    expect(res.status).toBe(status);
    expect(res.body.error).toBe(error);
    expect(res.body.message).toMatch(message);
    expect(await expenseCount(buyer)).toBe(before);
    expect(fetched).toEqual([]);
  });

  test('when the total (BT-112) or the rounding amount (BT-114) is in another currency than the invoice\'s (BT-5), then it is 422 validation_failed naming each', async () => {
    const buyer = await aBuyer();
    const xml = ubl
      .replace(/<cbc:TaxInclusiveAmount currencyID="EUR">/, '<cbc:TaxInclusiveAmount currencyID="JPY">')
      .replace(/<cbc:PayableRoundingAmount currencyID="EUR">/, '<cbc:PayableRoundingAmount currencyID="usd">');
    const ciiInYen = cii.replace(/<ram:GrandTotalAmount>/, '<ram:GrandTotalAmount currencyID="JPY">');

    const res = await importing(buyer, xml);
    const resCii = await importing(buyer, ciiInYen);
    const sameCurrencyInLowerCase = await importing(buyer, ubl.replace(/<cbc:TaxInclusiveAmount currencyID="EUR">/, '<cbc:TaxInclusiveAmount currencyID="eur">'));

    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error: 'validation_failed' });
    expect(res.body.errors).toEqual({
      'BT-112': ["is in JPY, not in the invoice's currency EUR (BT-5) (cac:LegalMonetaryTotal/cbc:TaxInclusiveAmount)"],
      'BT-114': ["is in usd, not in the invoice's currency EUR (BT-5) (cac:LegalMonetaryTotal/cbc:PayableRoundingAmount)"],
    });
    expect(resCii.body.errors).toEqual({ 'BT-112': ["is in JPY, not in the invoice's currency EUR (BT-5) (ram:SpecifiedTradeSettlementHeaderMonetarySummation/ram:GrandTotalAmount)"] });
    // ISO 4217 codes are capitals, as for BT-5: `eur` is not EUR.
    expect(sameCurrencyInLowerCase.status).toBe(422);
    expect(sameCurrencyInLowerCase.body.errors).toEqual({ 'BT-112': ["is in eur, not in the invoice's currency EUR (BT-5) (cac:LegalMonetaryTotal/cbc:TaxInclusiveAmount)"] });
  });

  test('when the invoice\'s currency (BT-5) is written in lower case, then it is 422 validation_failed on BT-5', async () => {
    const buyer = await aBuyer();

    const res = await importing(buyer, ubl.replace('<cbc:DocumentCurrencyCode>EUR<', '<cbc:DocumentCurrencyCode>eur<'));

    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ 'BT-5': ['must be written in capitals, as ISO 4217 has it: EUR, not "eur" (cbc:DocumentCurrencyCode)'] });
  });

  test('when the type code (BT-3) is missing, then it is 422 validation_failed on BT-3', async () => {
    const res = await importing(await aBuyer(), cii.replace(/<ram:TypeCode>380<\/ram:TypeCode>/, ''));

    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ 'BT-3': ['is missing (rsm:ExchangedDocument/ram:TypeCode)'] });
  });

  test('when a JSON route gets a body in a Content-Encoding it does not undo, then it answers as the import does', async () => {
    const res = await ctx.t.api.post('/expenses', undefined, { raw: JSON.stringify({ amount: 10, category: 'travel', date: '2026-01-02' }), headers: { 'content-type': 'application/json', 'content-encoding': 'compress' } });

    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'bad_request', message: 'Content-Encoding compress is not supported: send the body as it is, or encoded with gzip, deflate, br' });
  });

  test('when a PDF\'s object stream inflates from 300 KB to 300 MB, then the reader refuses it at 64 MB, quickly, its memory bounded', async () => {
    const reader = new DocumentReader({ threads: 1, timeoutMs: 10_000, maxXmlBytes: 10 * MB });
    const bomb = aPdfWithObjectStream('/FlateDecode', await deflatedSpaces(300 * MB, '2 0 '));
    expect(bomb.length).toBeLessThan(400 * 1024);
    try {
      // The thread is started and pdf-lib loaded first: what is measured is the bomb's alone.
      await expect(reader.read('application/pdf', await aPdf([]))).rejects.toThrow(InvalidDocument);
      const before = process.memoryUsage().rss;
      let peak = before;
      const sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage().rss);
      }, 5);
      const started = Date.now();
      try {
        await expect(reader.read('application/pdf', bomb)).rejects.toThrow(new InvalidDocument('The PDF unpacks to more than 64 MB: it is malformed or built to exhaust memory'));
      } finally {
        clearInterval(sampler);
      }
      peak = Math.max(peak, process.memoryUsage().rss);

      expect(Date.now() - started).toBeLessThan(5000);
      // Unbounded, the process grew by some 600 MB (the 300 MB, and pdf-lib's buffer doubling as it went) until the time limit ended the thread.
      expect((peak - before) / MB).toBeLessThan(160);
    } finally {
      await reader.close();
    }
  });

  test('when an invoice names URLs in an XInclude and a stylesheet instruction, then it is imported and nothing is fetched', async () => {
    const buyer = await aBuyer();
    const xml = ubl
      .replace(/^(<\?xml[^>]*\?>)/, `$1<?xml-stylesheet type="text/xsl" href="${listenerUrl}/style.xsl"?>`)
      .replace('</cbc:IssueDate>', `</cbc:IssueDate><cbc:Note><xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="${listenerUrl}/include" parse="text"/></cbc:Note>`);

    const res = await importing(buyer, xml);

    expect(res.status).toBe(201);
    expect(fetched).toEqual([]);
  });

  test('when a document takes longer to read than its limit, then the reader refuses it and goes on reading the next', async () => {
    const reader = new DocumentReader({ threads: 1, timeoutMs: 300, maxXmlBytes: 10 * MB });
    // pdf-lib looks for objects in every byte of a file without any: seconds for a few MB.
    const slow = Buffer.alloc(4 * MB);
    for (let i = 0; i < slow.length; i += 1) slow[i] = (i * 7919) % 251;
    slow.write('%PDF-1.7\n');
    try {
      const started = Date.now();
      await expect(reader.read('application/pdf', slow)).rejects.toThrow(new InvalidDocument('The document could not be read within 0.3 seconds: it is malformed or built to be slow to read'));
      expect(Date.now() - started).toBeLessThan(5000);

      await expect(reader.read('application/xml', Buffer.from(cii))).resolves.toMatchObject({ number: invoice.number });
    } finally {
      await reader.close();
    }
  });
});

describe('POST /expenses/import with an Idempotency-Key', () => {
  test('when the same bytes are sent again under the key, then the first answer is replayed and one expense is made', async () => {
    const { seller, invoice } = await anInvoiceOfASeller();
    const buyer = await aBuyer();
    const ubl = await einvoiceOf(seller, invoice.id, 'ubl');
    const key = { 'idempotency-key': `import-${invoice.id}` };

    const first = await importing(buyer, ubl, 'application/xml', '', key);
    const replay = await importing(buyer, ubl, 'application/xml', '', key);

    expect(first.status).toBe(201);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    expect(await expenseCount(buyer)).toBe(1);
  });

  test('when other bytes, another media type or another category come under the key, then it is 422 idempotency_key_reused', async () => {
    const { seller, invoice } = await anInvoiceOfASeller();
    const buyer = await aBuyer();
    const ubl = await einvoiceOf(seller, invoice.id, 'ubl');
    const key = { 'idempotency-key': `import-other-${invoice.id}` };
    await importing(buyer, ubl, 'application/xml', '', key);

    const answers = [
      await importing(buyer, Buffer.concat([ubl, Buffer.from('\n')]), 'application/xml', '', key),
      await importing(buyer, ubl, 'application/pdf', '', key),
      await importing(buyer, ubl, 'application/xml', '?category=travel', key),
    ];

    expect(answers.map((res) => [res.status, res.body.error])).toEqual(Array(3).fill([422, 'idempotency_key_reused']));
    expect(await expenseCount(buyer)).toBe(1);
  });

  test('when `?category=other` is sent again under the key of a request without it, then it is the same request', async () => {
    const { seller, invoice } = await anInvoiceOfASeller();
    const buyer = await aBuyer();
    const cii = await einvoiceOf(seller, invoice.id, 'cii');
    const key = { 'idempotency-key': `import-default-${invoice.id}` };

    const first = await importing(buyer, cii, 'application/xml', '', key);
    const replay = await importing(buyer, cii, 'application/xml', '?category=other', key);

    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
  });
});

describe('invoicing expenses import', () => {
  test('when a file is imported, then the expense is printed, and a second import names it and exits 1', async () => {
    const { seller, invoice } = await anInvoiceOfASeller();
    const buyer = await aBuyer();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'expenses-import-'));
    const file = path.join(dir, 'invoice.pdf');
    fs.writeFileSync(file, await einvoiceOf(seller, invoice.id, 'facturx'));
    const cli = (...args: string[]) => runCli(ctx.app.databaseUrl, ['expenses', 'import', ...args], {}, 30_000);

    const imported = await cli(file, '--business', String(buyer.businessId), '--mode', 'test', '--category', 'office-supplies', '--json');
    const again = await cli(file, '--business', String(buyer.businessId), '--mode', 'test');
    const human = await cli(path.join(dir, 'missing.xml'), '--business', String(buyer.businessId), '--mode', 'test');
    const badCategory = await cli(file, '--business', String(buyer.businessId), '--mode', 'test', '--category', 'Office Supplies');

    expect(imported.code).toBe(0);
    const expense = JSON.parse(imported.stdout);
    expect(expense).toMatchObject({ amount: invoice.total, currency: 'EUR', category: 'office-supplies', document_number: invoice.number, livemode: false });
    expect((await buyer.api.get(`/expenses/${expense.id}`)).body.expense).toEqual(expense);
    expect(again).toEqual({ code: 1, stdout: '', stderr: `error: ${file}: Invoice ${invoice.number} of Muster Design GmbH was already imported as expense ${expense.id}\n` });
    expect(human).toMatchObject({ code: 1, stderr: expect.stringContaining('no such file') });
    expect(badCategory).toMatchObject({ code: 2, stderr: expect.stringContaining('--category "Office Supplies": must be a lower-case slug') });
  });

  test('when the file is an e-invoice, then the human output names the invoice, seller, amount and tax', async () => {
    const { seller, invoice } = await anInvoiceOfASeller();
    const buyer = await aBuyer();
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'expenses-import-')), 'invoice.xml');
    fs.writeFileSync(file, await einvoiceOf(seller, invoice.id, 'cii'));

    const res = await runCli(ctx.app.databaseUrl, ['expenses', 'import', file, '--business', String(buyer.businessId), '--mode', 'test'], {}, 30_000);

    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(new RegExp(`^Imported test expense \\d+: invoice ${invoice.number} of Muster Design GmbH \\(DE123456789\\)\\n297\\.50 EUR \\(tax 47\\.50 EUR\\), dated \\d{4}-\\d{2}-\\d{2}, category other\\n`));
  });
});
