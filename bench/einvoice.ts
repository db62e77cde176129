/**
 * E-invoice rendering in process: a 60-line issued invoice (two rates) written as UBL and as CII,
 * 20 warm-up renders, then the median of 200 (the issue's target: under 20 ms each); then the same
 * invoice as a Factur-X PDF (PDF/A-3b carrying its CII) beside its ordinary PDF, rendered on the
 * calling thread as a PDF thread does (target: under 150 ms).
 *   npm run build && node dist/bench/einvoice.js
 */
import { toCii } from '../server/einvoice/cii';
import { invoiceSource, toEnInvoice } from '../server/einvoice/document';
import { toUbl } from '../server/einvoice/ubl';
import { InvoiceDocument, invoicePdf } from '../server/invoices/pdf';
import type { InvoiceDetail } from '../server/invoices/schema';

const rate = (id: number, percentage: number, taxable: number, tax: number) => ({
  tax_rate_id: id, display_name: `VAT ${percentage} %`, category: 'S' as const, percentage, inclusive: false, taxable_amount: taxable, tax_amount: tax, exemption_reason: null,
});

/** 60 lines of 10.00 × 2: the first 30 at 19 %, the rest at 7 %. */
function sixtyLines(): InvoiceDetail {
  const items = Array.from({ length: 60 }, (_, i) => ({ id: i + 1, description: `Item ${i + 1}`, quantity: 2, unit_price: 10, amount: 20, amount_excluding_tax: 20, tax_rate_ids: [i < 30 ? 1 : 2] }));
  const party = { city: 'Berlin', postal_code: '10115', state: null, country: 'DE', tax_id: 'DE123456789', email: 'billing@example.com', peppol_id: '9930:DE123456789' };
  return {
    number: 'INV-000001', status: 'sent', currency: 'EUR', issue_date: '2026-11-29', due_date: '2026-12-29', items,
    tax_breakdown: [rate(1, 19, 600, 114), rate(2, 7, 600, 42)],
    total_excluding_tax: 1200, total_tax: 156, rounding_amount: 0, total: 1356, amount_paid: 0,
    buyer_reference: 'PO-1', purchase_order: null, notes: null,
    seller: { legal_name: 'Muster GmbH', address_line1: 'Hauptstraße 1', address_line2: null, registration_number: null, phone: null, iban: 'DE89370400440532013000', bic: null, invoice_footer: null, ...party },
    buyer: { name: 'Camille Martin', company: null, address: '12 rue de la Paix', tax_exempt: 'none', buyer_reference: null, ...party, country: 'FR', tax_id: 'FR40303265045', peppol_id: '9957:FR40303265045' },
  } as unknown as InvoiceDetail;
}

function medianMs(render: () => string): number {
  for (let i = 0; i < 20; i += 1) render();
  const times: number[] = [];
  for (let i = 0; i < 200; i += 1) {
    const started = performance.now();
    render();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[100];
}

const invoice = sixtyLines();
const ubl = medianMs(() => toUbl(toEnInvoice(invoiceSource(invoice))));
const cii = medianMs(() => toCii(toEnInvoice(invoiceSource(invoice))));
process.stdout.write(`60-line invoice, median of 200 renders after 20: UBL ${ubl.toFixed(2)} ms, CII ${cii.toFixed(2)} ms (target: under 20 ms)\n`);

/** The same invoice as its PDF reads it: the Invoice row's columns and the items', in minor units. */
function pdfDocumentOf(detail: InvoiceDetail): InvoiceDocument {
  const minor = (amount: number) => Math.round(amount * 100);
  return {
    seller: detail.seller,
    buyer: detail.buyer,
    invoice: {
      ...detail, id: 1, livemode: true, tax_exempt: 'none', amount_credited: 0, credit_note_ids: null, paid_at: null, default_tax_rate_ids: null, updated_at: '2026-11-29T10:00:00.000Z',
      total_excluding_tax: minor(detail.total_excluding_tax), total_tax: minor(detail.total_tax), total: minor(detail.total), amount_paid: 0, rounding_amount: 0,
      tax_breakdown: detail.tax_breakdown.map((line) => ({ ...line, percentage_units: line.percentage * 10_000, taxable_amount: minor(line.taxable_amount), tax_amount: minor(line.tax_amount) })),
    },
    items: detail.items.map((item) => ({ ...item, quantity_units: item.quantity * 10_000, unit_price: minor(item.unit_price), amount: minor(item.amount), amount_excluding_tax: minor(item.amount_excluding_tax) })),
    payments: [],
    paymentUrl: 'https://pay.example.com/pay/token',
  } as unknown as InvoiceDocument;
}

async function medianPdfMs(render: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 20; i += 1) await render();
  const times: number[] = [];
  for (let i = 0; i < 200; i += 1) {
    const started = performance.now();
    await render();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[100];
}

async function facturx(): Promise<void> {
  const document = pdfDocumentOf(invoice);
  const attachment = { filename: 'factur-x.xml', xml: toCii(toEnInvoice(invoiceSource(invoice))) };
  const plain = await medianPdfMs(() => invoicePdf(document));
  const archival = await medianPdfMs(() => invoicePdf(document, attachment));
  process.stdout.write(
    `60-line invoice, median of 200 renders after 20, on the calling thread: Factur-X PDF ${archival.toFixed(1)} ms (PDF/A-3b, CII embedded), ordinary PDF ${plain.toFixed(1)} ms (target: under 150 ms)\n`,
  );
}

facturx().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : err}\n`);
  process.exitCode = 1;
});
