/**
 * An invoice as a PDF on A4: the invoice while money is due, the receipt once it is paid (payment
 * date and method). Amounts are the stored minor units, formatted with the currency's own decimals.
 * Both parties are as the invoice names them (its snapshot once issued), with what the contract's
 * "PDF" section asks of a legal invoice: their identities, the terms, the tax per rate and why none
 * is charged, and how to pay.
 */
import { formatMoney } from './email';
import { fromQuantityUnits } from '../money/amount';
import { fromPercentageUnits } from '../money/tax';
import { FittedLine, lineHeight, MARGIN, PdfLayout, TextStyle } from '../pdf/layout';
import type { PdfFile } from '../pdf/pool';
import { Payment } from '../payments/model';
import { paymentMethodName, tookMoney } from '../payments/view';
import { buyerLines, formatPercentage, paymentTerms, sellerDetails, taxLineLabel, taxNotes } from './legal-text';
import type { Invoice, InvoiceItem } from './model';
import { PAYABLE_STATUSES } from './status';
import type { InvoiceParties } from './view';

/** Everything the document shows, read by InvoiceDocuments. */
export interface InvoiceDocument extends InvoiceParties {
  invoice: Invoice;
  items: InvoiceItem[];
  /** Oldest first. */
  payments: Payment[];
  /** The payment page, printed while money is due; null on a draft. */
  paymentUrl: string | null;
}

const BODY: TextStyle = { size: 9.5 };
const BOLD: TextStyle = { size: 9.5, weight: 'bold' };
const LABEL: TextStyle = { size: 8, weight: 'bold', color: '#57606a' };
const MUTED: TextStyle = { size: 9.5, color: '#57606a' };
const SMALL: TextStyle = { size: 8, color: '#57606a' };
const NAME: TextStyle = { size: 16, weight: 'bold' };
const CELL_PADDING = 5;
/** The heading's name lines at most: past them, the seller's block starts with the whole name. */
const NAME_LINES = 3;
/** The share of the width the invoice's facts may take from the parties' column beside them. */
const MAX_FACTS_SHARE = 0.6;

const STATUS_NAMES: Record<Invoice['status'], string> = {
  draft: 'Draft, not issued',
  sent: 'Awaiting payment',
  viewed: 'Awaiting payment',
  partial: 'Partly paid',
  paid: 'Paid',
  void: 'Void',
};

/**
 * A table's column. One column wraps its text and takes the width the others leave; the others hold
 * one line per cell (an amount, a quantity, a date), as wide as their widest cell, `width` at least.
 */
type Column = { label: string; align: 'left' | 'right' } & ({ wraps: true } | { width: number });

/** What the wrapping column keeps however wide the amounts are; past it, the amounts are set smaller. */
const MIN_WRAPPING_WIDTH = 160;
/** What a totals label keeps however wide the amounts are; a longer label (a tax rate's long name) wraps. */
const MIN_TOTALS_LABEL_WIDTH = 120;

/** A paid invoice is a receipt: its file is named for it. */
function isReceipt(invoice: Invoice): boolean {
  return invoice.status === 'paid';
}

/** Money is still asked for: a draft (a preview of what it will ask) or a payable invoice with an amount due. */
function asksForMoney(invoice: Invoice): boolean {
  return (invoice.status === 'draft' || PAYABLE_STATUSES.includes(invoice.status)) && invoice.total > invoice.amount_paid;
}

function pdfFilename(invoice: Invoice): string {
  const name = invoice.number ?? `draft-${invoice.id}`;
  return isReceipt(invoice) ? `receipt-${name}.pdf` : `${name}.pdf`;
}

export async function invoicePdf(document: InvoiceDocument): Promise<PdfFile> {
  const { invoice, seller } = document;
  const receipt = isReceipt(invoice);
  const number = invoice.number ?? 'Draft';
  // A name is one line wherever it appears: line breaks in it would push the invoice's facts down.
  const sellerName = (seller.legal_name ?? '').replace(/\s+/g, ' ').trim();
  const layout = new PdfLayout({
    title: `${receipt ? 'Receipt' : 'Invoice'} ${number} from ${sellerName}`,
    author: sellerName,
    createdAt: new Date(invoice.updated_at),
  });
  const money = (minor: number) => formatMoney(minor, invoice.currency);

  heading(layout, document, sellerName, receipt);
  itemsTable(layout, document, money);
  totals(layout, invoice, document.payments, money);
  const notes = taxNotes(invoice.tax_breakdown ?? [], document.buyer, invoice.tax_exempt);
  if (notes.length) section(layout, 'Tax notes', () => notes.forEach((note) => layout.paragraph(note, BODY)));
  paymentsTable(layout, document.payments, money);
  if (invoice.notes) section(layout, 'Notes', () => layout.paragraph(invoice.notes as string, BODY));
  paymentInstructions(layout, document);
  if (seller.invoice_footer) {
    layout.y += 12;
    layout.ensureRoom(lineHeight(SMALL) * 2);
    layout.paragraph(seller.invoice_footer, SMALL);
  }

  const content = await layout.finish(`${sellerName} · ${receipt ? 'Receipt' : 'Invoice'} ${number}`);
  return { filename: pdfFilename(invoice), content };
}

/**
 * The seller's name and the title; under them, the seller's block and then the buyer's on the left,
 * the invoice's facts on the right.
 */
function heading(layout: PdfLayout, document: InvoiceDocument, sellerName: string, receipt: boolean): void {
  const { invoice, seller, buyer } = document;
  const title: TextStyle = { size: 20, weight: 'bold' };
  const titleLine = layout.line(receipt ? 'RECEIPT' : 'INVOICE', title);
  const nameWidth = layout.width - titleLine.width - 24;
  const nameCut = layout.wrap(sellerName, NAME, nameWidth).length > NAME_LINES;
  const name = layout.clamp(sellerName, NAME, nameWidth, NAME_LINES);
  layout.drawLine(titleLine, layout.left, layout.y, title, { align: 'right', width: layout.width });
  layout.y += Math.max(layout.drawLines(name, layout.left, layout.y, NAME), lineHeight(title)) + 6;
  if (!invoice.livemode) {
    layout.paragraph('TEST MODE: no real payment is taken.', { size: 9, weight: 'bold', color: '#8250df' });
  }
  layout.y += 8;

  const facts: [string, string][] = [
    [receipt ? 'Receipt for invoice' : 'Invoice number', invoice.number ?? 'Draft'],
    ['Issue date', invoice.issue_date],
    ...(receipt
      ? []
      : [
          ['Due date', invoice.due_date] as [string, string],
          ['Payment terms', paymentTerms(invoice.issue_date, invoice.due_date)] as [string, string],
        ]),
    ...(invoice.paid_at && receipt ? [['Paid on', invoice.paid_at.slice(0, 10)] as [string, string]] : []),
    ...(receipt ? methodsOf(document.payments) : []),
    ['Status', STATUS_NAMES[invoice.status]],
  ];

  // The facts first: a few short lines, on half the width or more for a long value (the payment
  // terms), up to MAX_FACTS_SHARE. The parties' lines may be many (an address of 1 000 characters),
  // so they go at the cursor and carry on over the page if they must.
  const top = layout.y;
  const labelWidth = Math.max(...facts.map(([label]) => layout.widthOf(label, MUTED))) + 12;
  const widestValue = Math.max(...facts.map(([, value]) => layout.widthOf(value, BOLD)));
  const factsWidth = Math.min(Math.max(layout.width / 2 - 12, labelWidth + widestValue), layout.width * MAX_FACTS_SHARE);
  const columnWidth = layout.width - factsWidth - 24;
  const factsLeft = layout.right - factsWidth;
  let right = top;
  for (const [label, value] of facts) {
    const valueLines = layout.wrap(value, BOLD, factsWidth - labelWidth);
    layout.drawLines(layout.wrap(label, MUTED, labelWidth - 6), factsLeft, right, MUTED);
    right += layout.drawLines(valueLines, factsLeft + labelWidth, right, BOLD, { align: 'right', width: factsWidth - labelWidth });
  }
  const page = layout.page;
  // The heading shows the seller's name cut short past a few lines: its block then gives it whole.
  const sellerLines = [...(nameCut ? [sellerName] : []), ...sellerDetails(seller)];
  sellerLines.forEach((text) => layout.paragraph(text, MUTED, { width: columnWidth }));
  layout.y += sellerLines.length ? 14 : 0;
  layout.ensureRoom(lineHeight(LABEL) + 2 + lineHeight(BOLD));
  layout.paragraph('BILL TO', LABEL, { width: columnWidth });
  layout.y += 2;
  buyerLines(buyer, invoice).forEach((text, index) => layout.paragraph(text, index === 0 ? BOLD : BODY, { width: columnWidth }));
  layout.y = (layout.page === page ? Math.max(layout.y, right) : layout.y) + 22;
}

/** "Payment method: Card", or the methods of several payments. */
function methodsOf(payments: readonly Payment[]): [string, string][] {
  const methods = [...new Set(payments.filter(tookMoney).map((payment) => paymentMethodName(payment.method)))];
  return methods.length ? [[methods.length > 1 ? 'Payment methods' : 'Payment method', methods.join(', ')]] : [];
}

/** The items; with a tax column, each line's rates as applied, when the invoice has any rate. */
function itemsTable(layout: PdfLayout, document: InvoiceDocument, money: (minor: number) => string): void {
  const { invoice } = document;
  const quantity = new Intl.NumberFormat('en-US', { maximumFractionDigits: 4 });
  const percentages = new Map((invoice.tax_breakdown ?? []).map((line) => [line.tax_rate_id, formatPercentage(fromPercentageUnits(line.percentage_units))]));
  // An item that names no rates takes the invoice's defaults.
  const ratesOf = (item: InvoiceItem) => (item.tax_rate_ids ?? invoice.default_tax_rate_ids ?? []).flatMap((id) => percentages.get(id) ?? []).join(', ') || '—';
  const taxed = percentages.size > 0;
  table(
    layout,
    [
      { label: 'Description', wraps: true, align: 'left' },
      { label: 'Qty', width: 55, align: 'right' },
      { label: 'Unit price', width: 100, align: 'right' },
      ...(taxed ? [{ label: 'Tax', width: 50, align: 'right' } as Column] : []),
      { label: 'Amount', width: 100, align: 'right' },
    ],
    document.items.map((item) => [
      item.description,
      quantity.format(fromQuantityUnits(item.quantity_units)),
      money(item.unit_price),
      ...(taxed ? [ratesOf(item)] : []),
      money(item.amount),
    ]),
  );
}

/**
 * The totals: with taxes (or a rounding), the subtotal excluding tax, one line per rate and the
 * rounding before the total; then what was paid and what is due.
 */
function totals(layout: PdfLayout, invoice: Invoice, payments: readonly Payment[], money: (minor: number) => string): void {
  const refunded = payments.some((payment) => (payment.amount_refunded ?? 0) > 0);
  const breakdown = invoice.tax_breakdown ?? [];
  const rows: [string, string, TextStyle][] = [];
  // An invoice without either keeps its one Total line: its subtotal is its total.
  if (breakdown.length || invoice.rounding_amount !== 0) {
    rows.push(['Subtotal', money(invoice.total_excluding_tax), BODY]);
    for (const line of breakdown) {
      rows.push([taxLineLabel(line.display_name, fromPercentageUnits(line.percentage_units), money(line.taxable_amount)), money(line.tax_amount), BODY]);
    }
    if (invoice.rounding_amount !== 0) rows.push(['Rounding', money(invoice.rounding_amount), BODY]);
  }
  rows.push(['Total', money(invoice.total), BODY]);
  // amount_paid is what was kept: refunds have come off it.
  if (!isReceipt(invoice) && (invoice.amount_paid > 0 || refunded)) rows.push([refunded ? 'Paid, net of refunds' : 'Paid', money(invoice.amount_paid), BODY]);
  const emphasis: TextStyle = { size: 11, weight: 'bold' };
  if (isReceipt(invoice)) rows.push(['Amount paid', money(invoice.amount_paid), emphasis]);
  else if (invoice.status !== 'void') rows.push(['Amount due', money(invoice.total - invoice.amount_paid), emphasis]);
  // Labels on the left of the block, amounts ending at the right edge, each amount on one line: the
  // block widens for the largest amounts rather than break one, and a long label wraps.
  const gap = 24;
  const widestLabel = Math.max(...rows.map(([label, , style]) => layout.widthOf(label, style)));
  const widestValue = Math.max(...rows.map(([, value, style]) => layout.widthOf(value, style)));
  const valueWidth = Math.min(widestValue, layout.width - Math.min(widestLabel, MIN_TOTALS_LABEL_WIDTH) - gap - CELL_PADDING);
  const labelWidth = Math.min(widestLabel, layout.width - valueWidth - gap - CELL_PADDING);
  const left = layout.right - Math.max(250, labelWidth + gap + valueWidth + CELL_PADDING);
  const laidOut = rows.map(([label, value, style]) => ({ labels: layout.wrap(label, style, labelWidth), value, style }));
  const heightOf = (row: (typeof laidOut)[number]) => row.labels.length * lineHeight(row.style) + 4;
  layout.y += 6;
  // The block together where it fits on a page; a breakdown of many rates carries on row by row.
  layout.ensureRoom(laidOut.reduce((sum, row) => sum + heightOf(row), 0));
  for (const row of laidOut) {
    layout.ensureRoom(heightOf(row));
    const top = layout.y;
    layout.drawLines(row.labels, left, top, row.style);
    drawFitted(layout, layout.fit(row.value, row.style, valueWidth), layout.right - CELL_PADDING - valueWidth, top, { align: 'right', width: valueWidth });
    layout.y += heightOf(row);
  }
  layout.y += 10;
}

/**
 * How to pay while money is asked for: by bank transfer to the seller's account when it has an IBAN
 * (with the invoice number as the reference), and online through the payment page.
 */
function paymentInstructions(layout: PdfLayout, document: InvoiceDocument): void {
  const { invoice, seller, paymentUrl } = document;
  if (!asksForMoney(invoice)) return;
  if (seller.iban) {
    const iban = seller.iban;
    section(layout, 'Bank transfer', () => {
      // Printed in groups of four, as ISO 13616 writes an IBAN on paper.
      layout.paragraph(`IBAN: ${iban.replace(/(.{4})(?=.)/g, '$1 ')}`, BODY);
      if (seller.bic) layout.paragraph(`BIC: ${seller.bic}`, BODY);
      if (invoice.number) layout.paragraph(`Reference: ${invoice.number}`, BODY);
    });
  }
  // A draft has no payment page yet.
  if (paymentUrl) {
    section(layout, 'Pay online', () => layout.paragraph(paymentUrl, { ...BODY, color: '#0969da' }, { link: paymentUrl }));
  }
}

function paymentsTable(layout: PdfLayout, payments: readonly Payment[], money: (minor: number) => string): void {
  const rows = payments.filter(tookMoney);
  if (!rows.length) return;
  const refunds = rows.some((payment) => (payment.amount_refunded ?? 0) > 0);
  layout.y += 8;
  table(
    layout,
    [
      { label: 'Date', width: 90, align: 'left' },
      { label: 'Method', wraps: true, align: 'left' },
      { label: 'Amount', width: 100, align: 'right' },
      ...(refunds ? [{ label: 'Refunded', width: 100, align: 'right' } as Column] : []),
    ],
    rows.map((payment) => [
      (payment.paid_at ?? payment.created_at).slice(0, 10),
      paymentMethodName(payment.method),
      money(payment.amount),
      ...(refunds ? [payment.amount_refunded ? money(payment.amount_refunded) : '—'] : []),
    ]),
    'Payments',
  );
  layout.y += 8;
}

const SECTION_TITLE_HEIGHT = lineHeight(LABEL) + 2;

function sectionTitle(layout: PdfLayout, title: string): void {
  layout.drawLine(layout.line(title.toUpperCase(), LABEL), layout.left, layout.y, LABEL);
  layout.y += SECTION_TITLE_HEIGHT;
}

/** A titled block of text, its title kept with the block's first two lines. */
function section(layout: PdfLayout, title: string, body: () => void): void {
  layout.y += 8;
  layout.ensureRoom(SECTION_TITLE_HEIGHT + lineHeight(BODY) * 2);
  sectionTitle(layout, title);
  body();
  layout.y += 8;
}

function drawFitted(layout: PdfLayout, fitted: FittedLine, x: number, top: number, options: { align: 'left' | 'right'; width: number }): void {
  layout.drawLine(fitted.line, x, top + fitted.drop, fitted.style, options);
}

/**
 * Rows under a header that is repeated on every page the table reaches (and under `title`, if
 * given). The header stays with the first row, and a row moves to the next page whole when it fits
 * there; a row taller than a page (a very long description) is split.
 */
function table(layout: PdfLayout, columns: Column[], rows: string[][], title?: string): void {
  const padded = (width: number) => width - 2 * CELL_PADDING;
  const labels = columns.map((column) => column.label.toUpperCase());
  // One-line cells measured once: their widths size the columns, and they are drawn as measured unless they must shrink.
  const oneLines = rows.map((row) => row.map((text, index) => ('wraps' in columns[index] ? null : layout.line(text, BODY))));
  const natural = columns.map((column, index) =>
    'wraps' in column ? 0 : Math.max(column.width, layout.widthOf(labels[index], LABEL) + 2 * CELL_PADDING, ...oneLines.map((row) => (row[index]?.width ?? 0) + 2 * CELL_PADDING)),
  );
  const oneLineWidth = natural.reduce((sum, width) => sum + width, 0);
  const scale = Math.min(1, (layout.width - MIN_WRAPPING_WIDTH) / oneLineWidth);
  const widths = columns.map((column, index) => ('wraps' in column ? layout.width - oneLineWidth * scale : natural[index] * scale));
  const lefts = widths.map((_, index) => layout.left + widths.slice(0, index).reduce((sum, width) => sum + width, 0));
  const cellsOf = (row: string[], rowIndex: number): FittedLine[][] =>
    row.map((text, index) => {
      const measured = oneLines[rowIndex][index];
      return measured
        ? [layout.fit(text, BODY, padded(widths[index]), measured)]
        : layout.wrap(text, BODY, padded(widths[index])).map((line) => ({ line, style: BODY, drop: 0 }));
    });

  const headerHeight = lineHeight(LABEL) + 2 * CELL_PADDING;
  const drawHeader = () => {
    layout.band(layout.y, headerHeight, '#f6f8fa');
    columns.forEach((column, index) => {
      drawFitted(layout, layout.fit(labels[index], LABEL, padded(widths[index])), lefts[index] + CELL_PADDING, layout.y + CELL_PADDING, { align: column.align, width: padded(widths[index]) });
    });
    layout.y += headerHeight;
  };
  const step = lineHeight(BODY);
  const fullPage = Math.floor((layout.bottom - MARGIN - headerHeight - 2 * CELL_PADDING) / step);
  const rowCells = rows.map(cellsOf);
  const tallestOf = (cells: FittedLine[][]) => Math.max(...cells.map((lines) => lines.length));

  // The title and the header go only where the first row (or its first lines, if it is taller than a page) fits under them.
  const firstRow = rowCells.length ? tallestOf(rowCells[0]) : 0;
  layout.ensureRoom((title ? SECTION_TITLE_HEIGHT : 0) + headerHeight + (firstRow <= fullPage ? firstRow : 3) * step + 2 * CELL_PADDING);
  if (title) sectionTitle(layout, title);
  drawHeader();
  layout.onNewPage = drawHeader;
  for (let cells of rowCells) {
    while (cells.some((lines) => lines.length)) {
      const tallest = tallestOf(cells);
      const room = Math.floor((layout.bottom - layout.y - 2 * CELL_PADDING) / step);
      // Whole on the next page when it fits there; split only when it is taller than a page.
      if (room < tallest && (tallest <= fullPage || room < 3)) {
        layout.newPage();
        continue;
      }
      const count = Math.min(room, tallest);
      cells.forEach((lines, index) => {
        lines.slice(0, count).forEach((fitted, line) => {
          drawFitted(layout, fitted, lefts[index] + CELL_PADDING, layout.y + CELL_PADDING + line * step, { align: columns[index].align, width: padded(widths[index]) });
        });
      });
      layout.y += count * step + 2 * CELL_PADDING;
      layout.rule();
      cells = cells.map((lines) => lines.slice(count));
    }
  }
  layout.onNewPage = null;
}
