/**
 * E-invoice rendering in process: a 60-line issued invoice (two rates) written as UBL and as CII,
 * 20 warm-up renders, then the median of 200 (the issue's target: under 20 ms each).
 *   npm run build && node dist/bench/einvoice.js
 */
import { toCii } from '../server/einvoice/cii';
import { toEnInvoice } from '../server/einvoice/document';
import { toUbl } from '../server/einvoice/ubl';
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
const ubl = medianMs(() => toUbl(toEnInvoice(invoice)));
const cii = medianMs(() => toCii(toEnInvoice(invoice)));
process.stdout.write(`60-line invoice, median of 200 renders after 20: UBL ${ubl.toFixed(2)} ms, CII ${cii.toFixed(2)} ms (target: under 20 ms)\n`);
