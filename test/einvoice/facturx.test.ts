/**
 * Factur-X over HTTP (contract, "E-invoices": `facturx`): an invoice's and a credit note's PDF as
 * PDF/A-3 carrying the `cii` document as factur-x.xml. Read back with poppler (pdffonts, pdfdetach,
 * pdfinfo -meta, pdftotext) and checked by the official validator, which reads the embedded XML
 * with the CEN rules and warns (FX-PDFA3, FX-AFREL, FX-AF, FX-PROFILE) when the PDF's declarations
 * are missing. The ordinary PDF stays as it was: no attachment, no PDF/A.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Tenant, useApp } from '../support/app';
import { pdfText, renderPdf } from '../support/pdf';
import { aSeller, created, issued, line, validate } from './support';

const ctx = useApp({ rateLimitPerMinute: 100_000 });
const OUTPUT = path.join(__dirname, '..', 'output', 'einvoice', process.env.TEST_DB ?? 'sqlite');
const run = promisify(execFile);

/** What poppler reads in a PDF: its fonts (pdffonts' rows), its attachments and their content, its XMP. */
async function readBack(bytes: Buffer): Promise<{ fonts: { name: string; type: string; embedded: string }[]; attachments: string[]; attached: string; xmp: string; version: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'facturx-'));
  try {
    const file = path.join(dir, 'document.pdf');
    fs.writeFileSync(file, bytes);
    // name, type, encoding, emb, sub, uni, object ID: the name has no spaces, the type may (CID TrueType).
    const fonts = (await run('pdffonts', [file])).stdout.trim().split('\n').slice(2).map((row) => {
      const match = /^(\S+)\s+(.+?)\s+(Identity-H|WinAnsi|Custom|Builtin|Standard|MacRoman)\s+(yes|no)\s+(yes|no)\s+(yes|no)\s+\d+\s+\d+$/.exec(row);
      if (!match) throw new Error(`pdffonts row not understood: ${row}`);
      return { name: match[1], type: match[2], embedded: match[4] };
    });
    const attachments = (await run('pdfdetach', ['-list', file])).stdout.trim().split('\n').slice(1).map((row) => row.replace(/^\d+:\s*/, ''));
    let attached = '';
    if (attachments.length) {
      await run('pdfdetach', ['-save', '1', '-o', path.join(dir, 'attached.xml'), file]);
      attached = fs.readFileSync(path.join(dir, 'attached.xml'), 'utf8');
    }
    const xmp = (await run('pdfinfo', ['-meta', file])).stdout;
    return { fonts, attachments, attached, xmp, version: bytes.subarray(0, 8).toString('latin1') };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Whether `xml` is well-formed, by xmllint when the machine has it (the validator installs it); null without it. */
async function wellFormed(xml: string): Promise<boolean | null> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'xmp-'));
  try {
    fs.writeFileSync(path.join(dir, 'xmp.xml'), xml);
    await run('xmllint', ['--noout', path.join(dir, 'xmp.xml')]);
    return true;
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ENOENT') return null;
    return false;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The XMP packet itself, as pdfinfo -meta prints it (from `<?xpacket begin` to `<?xpacket end…?>`). */
const packetOf = (xmp: string) => xmp.slice(xmp.indexOf('<?xpacket begin'), xmp.indexOf('?>', xmp.indexOf('<?xpacket end')) + 2);

async function get(t: Tenant, url: string) {
  const res = await t.api.get(url);
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${res.text}`);
  return res;
}

test('when an invoice and a credit note are fetched as facturx, then each is its PDF as PDF/A-3 carrying its CII document as factur-x.xml, fonts embedded, passing the official rules with no PDF warning', async () => {
  // Arrange: a seller whose name needs escaping in the XMP, a 19 % invoice of a few lines, a credit note for one of them.
  const t = await aSeller(ctx.app, 'EUR', { legal_name: 'Muster & Söhne Design GmbH' });
  const vat = await created(t, '/tax-rates', { display_name: 'VAT', percentage: 19 }, 'tax_rate');
  const invoice = await issued(t, { items: [line('Design work', 1234.56, { quantity: 3 }), line('Hosting', 30), line('Ελληνικά, Русский, 東京', 12.5)], default_tax_rate_ids: [vat.id] });
  const note = await created(t, `/invoices/${invoice.id}/credit-notes`, { items: [{ invoice_item_id: invoice.items[1].id }], reason: 'order_change' }, 'credit_note');
  const documents = { invoice: `/invoices/${invoice.id}`, 'credit-note': `/credit-notes/${note.id}` };
  fs.mkdirSync(OUTPUT, { recursive: true });
  const files: string[] = [];

  for (const [name, url] of Object.entries(documents)) {
    // Act
    const res = await get(t, `${url}/einvoice?format=facturx`);
    const cii = await get(t, `${url}/einvoice?format=cii`);
    const plain = await get(t, `${url}/pdf`);

    // Assert
    expect(res.headers.get('content-type')).toBe('application/pdf');
    const pdf = await readBack(res.bytes);
    expect(pdf.version).toBe('%PDF-1.7');
    expect(pdf.fonts.length).toBeGreaterThan(0);
    expect(pdf.fonts.filter((font) => font.embedded !== 'yes')).toEqual([]);
    expect(pdf.attachments).toEqual(['factur-x.xml']);
    expect(pdf.attached).toBe(cii.text);
    // The XMP declares PDF/A-3b and Factur-X's EN 16931 profile, with the seller's name escaped.
    expect(pdf.xmp).toMatch(/<pdfaid:part>3<\/pdfaid:part>\s*<pdfaid:conformance>B<\/pdfaid:conformance>/);
    for (const [property, value] of [['DocumentType', 'INVOICE'], ['DocumentFileName', 'factur-x.xml'], ['Version', '1.0'], ['ConformanceLevel', 'EN 16931']]) {
      expect(pdf.xmp).toContain(`<fx:${property}>${value}</fx:${property}>`);
    }
    expect(pdf.xmp).toContain('<pdfaSchema:namespaceURI>urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#</pdfaSchema:namespaceURI>');
    expect(pdf.xmp).toContain('from Muster &amp; Söhne Design GmbH</rdf:li>');
    const xmpWellFormed = await wellFormed(packetOf(pdf.xmp));
    if (xmpWellFormed === null) process.stderr.write('xmllint is not here: the XMP packet was not parsed\n');
    else expect(xmpWellFormed).toBe(true);
    // It reads as the ordinary PDF does, page for page.
    expect(await pdfText(res.bytes)).toBe(await pdfText(plain.bytes));
    expect(await renderPdf(res.bytes, `facturx-${name}`)).not.toHaveLength(0);
    const file = path.join(OUTPUT, `facturx-${name}.pdf`);
    fs.writeFileSync(file, res.bytes);
    files.push(file);
  }

  const verdict = await validate('en16931', files);
  if (!verdict) {
    process.stderr.write('../shared/einvoice/validate is not here: the Factur-X PDFs were not checked by the official rules\n');
    return;
  }
  expect(verdict.output).not.toMatch(/\bFX-[A-Z0-9]+\b/);
  expect(verdict.output).toContain('2 valid, 0 invalid');
  expect(verdict.code).toBe(0);
}, 240_000);

test('when the ordinary PDF is fetched, then it carries no attachment and declares no PDF/A', async () => {
  const t = await aSeller(ctx.app);
  const vat = await created(t, '/tax-rates', { display_name: 'VAT', percentage: 19 }, 'tax_rate');
  const invoice = await issued(t, { items: [line('Design work', 100)], default_tax_rate_ids: [vat.id] });

  const res = await get(t, `/invoices/${invoice.id}/pdf`);

  const pdf = await readBack(res.bytes);
  expect(pdf.version).toBe('%PDF-1.3');
  expect(pdf.attachments).toEqual([]);
  expect(pdf.xmp).not.toContain('pdfaid');
  expect(pdf.fonts.filter((font) => font.embedded !== 'yes')).toEqual([]);
});
