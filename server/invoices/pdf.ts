/**
 * An invoice as a PDF on A4: the invoice while money is due, the receipt once it is paid (payment
 * date and method). Amounts are the stored minor units, formatted with the currency's own decimals.
 */
import { formatMoney } from './email';
import { fromQuantityUnits } from '../money/amount';
import { FittedLine, lineHeight, MARGIN, PdfLayout, TextStyle } from '../pdf/layout';
import type { PdfFile } from '../pdf/pool';
import { Payment } from '../payments/model';
import { paymentMethodName, tookMoney } from '../payments/view';
import type { Invoice, InvoiceItem } from './model';
import { PAYABLE_STATUSES } from './status';

/** Everything the document shows, read by InvoiceDocuments. */
export interface InvoiceDocument {
  businessName: string;
  client: { name: string; email: string; company: string | null; address: string | null };
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
const CELL_PADDING = 5;

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

/** A paid invoice is a receipt: its file is named for it. */
function isReceipt(invoice: Invoice): boolean {
  return invoice.status === 'paid';
}

function pdfFilename(invoice: Invoice): string {
  const name = invoice.number ?? `draft-${invoice.id}`;
  return isReceipt(invoice) ? `receipt-${name}.pdf` : `${name}.pdf`;
}

export async function invoicePdf(document: InvoiceDocument): Promise<PdfFile> {
  const { invoice } = document;
  const receipt = isReceipt(invoice);
  const number = invoice.number ?? 'Draft';
  // A name is one line wherever it appears: line breaks in it would push the invoice's facts down.
  const businessName = document.businessName.replace(/\s+/g, ' ').trim();
  const layout = new PdfLayout({
    title: `${receipt ? 'Receipt' : 'Invoice'} ${number} from ${businessName}`,
    author: businessName,
    createdAt: new Date(invoice.updated_at),
  });
  const money = (minor: number) => formatMoney(minor, invoice.currency);

  heading(layout, { ...document, businessName }, receipt);
  itemsTable(layout, document, money);
  totals(layout, invoice, document.payments, money);
  paymentsTable(layout, document.payments, money);
  if (invoice.notes) section(layout, 'Notes', () => layout.paragraph(invoice.notes as string, BODY));
  if (document.paymentUrl && PAYABLE_STATUSES.includes(invoice.status) && invoice.total > invoice.amount_paid) {
    const url = document.paymentUrl;
    section(layout, 'Pay online', () => layout.paragraph(url, { ...BODY, color: '#0969da' }, { link: url }));
  }

  const content = await layout.finish(`${businessName} · ${receipt ? 'Receipt' : 'Invoice'} ${number}`);
  return { filename: pdfFilename(invoice), content };
}

/** The business and the title, the client on the left, the invoice's facts on the right. */
function heading(layout: PdfLayout, document: InvoiceDocument, receipt: boolean): void {
  const { invoice, client } = document;
  const title: TextStyle = { size: 20, weight: 'bold' };
  const titleLine = layout.line(receipt ? 'RECEIPT' : 'INVOICE', title);
  const name = layout.clamp(document.businessName, { size: 16, weight: 'bold' }, layout.width - titleLine.width - 24, 3);
  layout.drawLine(titleLine, layout.left, layout.y, title, { align: 'right', width: layout.width });
  layout.y += Math.max(layout.drawLines(name, layout.left, layout.y, { size: 16, weight: 'bold' }), lineHeight(title)) + 6;
  if (!invoice.livemode) {
    layout.paragraph('TEST MODE: no real payment is taken.', { size: 9, weight: 'bold', color: '#8250df' });
  }
  layout.y += 14;

  const columnWidth = layout.width / 2 - 12;
  const facts: [string, string][] = [
    [receipt ? 'Receipt for invoice' : 'Invoice number', invoice.number ?? 'Draft'],
    ['Issue date', invoice.issue_date],
    ...(receipt ? [] : [['Due date', invoice.due_date] as [string, string]]),
    ...(invoice.paid_at && receipt ? [['Paid on', invoice.paid_at.slice(0, 10)] as [string, string]] : []),
    ...(receipt ? methodsOf(document.payments) : []),
    ['Status', STATUS_NAMES[invoice.status]],
  ];
  const billTo = [client.name, client.company, client.email, client.address].filter((line): line is string => Boolean(line));

  // The facts first: a few short lines. The client's lines may be many (an address of 1 000
  // characters), so they go at the cursor and carry on over the page if they must.
  const top = layout.y;
  const factsLeft = layout.right - columnWidth;
  const labelWidth = 110;
  let right = top;
  for (const [label, value] of facts) {
    const valueLines = layout.wrap(value, BOLD, columnWidth - labelWidth);
    layout.drawLines(layout.wrap(label, MUTED, labelWidth - 6), factsLeft, right, MUTED);
    right += layout.drawLines(valueLines, factsLeft + labelWidth, right, BOLD, { align: 'right', width: columnWidth - labelWidth });
  }
  const page = layout.page;
  layout.paragraph('BILL TO', LABEL, { width: columnWidth });
  layout.y += 2;
  billTo.forEach((text, index) => layout.paragraph(text, index === 0 ? BOLD : BODY, { width: columnWidth }));
  layout.y = (layout.page === page ? Math.max(layout.y, right) : layout.y) + 22;
}

/** "Payment method: Card", or the methods of several payments. */
function methodsOf(payments: readonly Payment[]): [string, string][] {
  const methods = [...new Set(payments.filter(tookMoney).map((payment) => paymentMethodName(payment.method)))];
  return methods.length ? [[methods.length > 1 ? 'Payment methods' : 'Payment method', methods.join(', ')]] : [];
}

function itemsTable(layout: PdfLayout, document: InvoiceDocument, money: (minor: number) => string): void {
  const quantity = new Intl.NumberFormat('en-US', { maximumFractionDigits: 4 });
  table(
    layout,
    [
      { label: 'Description', wraps: true, align: 'left' },
      { label: 'Qty', width: 55, align: 'right' },
      { label: 'Unit price', width: 100, align: 'right' },
      { label: 'Amount', width: 100, align: 'right' },
    ],
    document.items.map((item) => [item.description, quantity.format(fromQuantityUnits(item.quantity_units)), money(item.unit_price), money(item.amount)]),
  );
}

function totals(layout: PdfLayout, invoice: Invoice, payments: readonly Payment[], money: (minor: number) => string): void {
  const refunded = payments.some((payment) => (payment.amount_refunded ?? 0) > 0);
  const rows: [string, string, TextStyle][] = [['Total', money(invoice.total), BODY]];
  // amount_paid is what was kept: refunds have come off it.
  if (!isReceipt(invoice) && (invoice.amount_paid > 0 || refunded)) rows.push([refunded ? 'Paid, net of refunds' : 'Paid', money(invoice.amount_paid), BODY]);
  const emphasis: TextStyle = { size: 11, weight: 'bold' };
  if (isReceipt(invoice)) rows.push(['Amount paid', money(invoice.amount_paid), emphasis]);
  else if (invoice.status !== 'void') rows.push(['Amount due', money(invoice.total - invoice.amount_paid), emphasis]);
  // Labels on the left of the block, amounts ending at the right edge, each on one line: the block
  // widens for the largest amounts rather than break one.
  const gap = 24;
  const labelWidth = Math.max(...rows.map(([label, , style]) => layout.widthOf(label, style)));
  const valueWidth = Math.min(Math.max(...rows.map(([, value, style]) => layout.widthOf(value, style))), layout.width - labelWidth - gap - CELL_PADDING);
  const left = layout.right - Math.max(250, labelWidth + gap + valueWidth + CELL_PADDING);
  layout.y += 6;
  layout.ensureRoom(rows.reduce((sum, [, , style]) => sum + lineHeight(style) + 4, 0));
  for (const [label, value, style] of rows) {
    layout.drawLine(layout.line(label, style), left, layout.y, style);
    drawFitted(layout, layout.fit(value, style, valueWidth), layout.right - CELL_PADDING - valueWidth, layout.y, { align: 'right', width: valueWidth });
    layout.y += lineHeight(style) + 4;
  }
  layout.y += 10;
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
