/**
 * An invoice as a PDF on A4: the invoice while money is due, the receipt once it is paid (payment
 * date and method). Amounts are the stored minor units, formatted with the currency's own decimals.
 */
import { formatMoney } from './email';
import { fromQuantityUnits } from '../money/amount';
import { Line, lineHeight, MARGIN, PdfLayout, TextStyle } from '../pdf/layout';
import { Payment } from '../payments/model';
import { paymentMethodName, tookMoney } from '../payments/view';
import { Invoice, InvoiceItem, PAYABLE_STATUSES } from './model';

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

export interface PdfFile {
  filename: string;
  content: Buffer;
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

interface Column {
  label: string;
  /** Points, or the rest of the width. */
  width: number | 'rest';
  align: 'left' | 'right';
}

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
  const layout = new PdfLayout({
    title: `${receipt ? 'Receipt' : 'Invoice'} ${number} from ${document.businessName}`,
    author: document.businessName,
    createdAt: new Date(invoice.updated_at),
  });
  const money = (minor: number) => formatMoney(minor, invoice.currency);

  heading(layout, document, receipt);
  itemsTable(layout, document, money);
  totals(layout, invoice, document.payments, money);
  paymentsTable(layout, document.payments, money);
  if (invoice.notes) section(layout, 'Notes', () => layout.paragraph(invoice.notes as string, BODY));
  if (document.paymentUrl && PAYABLE_STATUSES.includes(invoice.status) && invoice.total > invoice.amount_paid) {
    const url = document.paymentUrl;
    section(layout, 'Pay online', () => layout.paragraph(url, { ...BODY, color: '#0969da' }, { link: url }));
  }

  const content = await layout.finish(`${document.businessName} · ${receipt ? 'Receipt' : 'Invoice'} ${number}`);
  return { filename: pdfFilename(invoice), content };
}

/** The business and the title, the client on the left, the invoice's facts on the right. */
function heading(layout: PdfLayout, document: InvoiceDocument, receipt: boolean): void {
  const { invoice, client } = document;
  const title: TextStyle = { size: 20, weight: 'bold' };
  const titleLine = layout.line(receipt ? 'RECEIPT' : 'INVOICE', title);
  const name = layout.wrap(document.businessName, { size: 16, weight: 'bold' }, layout.width - titleLine.width - 24);
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
      { label: 'Description', width: 'rest', align: 'left' },
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
  const width = 250;
  const half = width / 2;
  const left = layout.right - width;
  layout.y += 6;
  layout.ensureRoom(rows.reduce((sum, [, , style]) => sum + lineHeight(style) + 4, 0));
  for (const [label, value, style] of rows) {
    layout.drawLine(layout.line(label, style), left, layout.y, style);
    layout.drawLines(layout.wrap(value, style, half), left + half, layout.y, style, { align: 'right', width: half - CELL_PADDING });
    layout.y += lineHeight(style) + 4;
  }
  layout.y += 10;
}

function paymentsTable(layout: PdfLayout, payments: readonly Payment[], money: (minor: number) => string): void {
  const rows = payments.filter(tookMoney);
  if (!rows.length) return;
  const refunds = rows.some((payment) => (payment.amount_refunded ?? 0) > 0);
  section(layout, 'Payments', () =>
    table(
      layout,
      [
        { label: 'Date', width: 90, align: 'left' },
        { label: 'Method', width: 'rest', align: 'left' },
        { label: 'Amount', width: 100, align: 'right' },
        ...(refunds ? [{ label: 'Refunded', width: 100, align: 'right' } as Column] : []),
      ],
      rows.map((payment) => [
        (payment.paid_at ?? payment.created_at).slice(0, 10),
        paymentMethodName(payment.method),
        money(payment.amount),
        ...(refunds ? [payment.amount_refunded ? money(payment.amount_refunded) : '—'] : []),
      ]),
    ),
  );
}

function section(layout: PdfLayout, title: string, body: () => void): void {
  layout.y += 8;
  layout.ensureRoom(lineHeight(LABEL) + 4 + lineHeight(BODY) * 2);
  layout.paragraph(title.toUpperCase(), LABEL);
  layout.y += 2;
  body();
  layout.y += 8;
}

/**
 * Rows under a header that is repeated on every page the table reaches. A row moves to the next
 * page whole when it fits there; a row taller than a page (a very long description) is split.
 */
function table(layout: PdfLayout, columns: Column[], rows: string[][]): void {
  const fixed = columns.reduce((sum, column) => sum + (column.width === 'rest' ? 0 : column.width), 0);
  const widths = columns.map((column) => (column.width === 'rest' ? layout.width - fixed : column.width));
  const lefts = widths.map((_, index) => layout.left + widths.slice(0, index).reduce((sum, width) => sum + width, 0));
  const headerHeight = lineHeight(LABEL) + 2 * CELL_PADDING;
  const drawHeader = () => {
    layout.band(layout.y, headerHeight, '#f6f8fa');
    columns.forEach((column, index) => {
      layout.drawLine(layout.line(column.label.toUpperCase(), LABEL), lefts[index] + CELL_PADDING, layout.y + CELL_PADDING, LABEL, { align: column.align, width: widths[index] - 2 * CELL_PADDING });
    });
    layout.y += headerHeight;
  };

  layout.ensureRoom(headerHeight + lineHeight(BODY) * 2 + 2 * CELL_PADDING);
  drawHeader();
  layout.onNewPage = drawHeader;
  const step = lineHeight(BODY);
  const fullPage = Math.floor((layout.bottom - MARGIN - headerHeight - 2 * CELL_PADDING) / step);
  for (const row of rows) {
    let cells: Line[][] = row.map((text, index) => layout.wrap(text, BODY, widths[index] - 2 * CELL_PADDING));
    while (cells.some((lines) => lines.length)) {
      const tallest = Math.max(...cells.map((lines) => lines.length));
      const room = Math.floor((layout.bottom - layout.y - 2 * CELL_PADDING) / step);
      // Whole on the next page when it fits there; split only when it is taller than a page.
      if (room < tallest && (tallest <= fullPage || room < 3)) {
        layout.newPage();
        continue;
      }
      const count = Math.min(room, tallest);
      cells.forEach((lines, index) => {
        layout.drawLines(lines.slice(0, count), lefts[index] + CELL_PADDING, layout.y + CELL_PADDING, BODY, {
          align: columns[index].align,
          width: widths[index] - 2 * CELL_PADDING,
        });
      });
      layout.y += count * step + 2 * CELL_PADDING;
      layout.rule();
      cells = cells.map((lines) => lines.slice(count));
    }
  }
  layout.onNewPage = null;
}
