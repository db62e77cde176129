/**
 * An invoice as a PDF on A4: the invoice while money is due, the receipt once it is paid (payment
 * date and method). Amounts are the stored minor units, formatted with the currency's own decimals.
 * Both parties are as the invoice names them (its snapshot once issued), with what the contract's
 * "PDF" section asks of a legal invoice: their identities, the terms, the tax per rate and why none
 * is charged, and how to pay.
 */
import { formatMoney } from './email';
import { fromQuantityUnits } from '../money/amount';
import { fromPercentageUnits, TaxBreakdownLine, TaxExempt } from '../money/tax';
import type { SellerSnapshot } from '../businesses/view';
import type { BuyerSnapshot } from '../clients/view';
import type { PdfAttachment } from '../pdf/facturx';
import { FittedLine, ISSUER_NAME, LABEL, lineHeight, MARGIN, MUTED_COLOR, PdfLayout, TextStyle } from '../pdf/layout';
import type { PdfFile } from '../pdf/pool';
import { Payment } from '../payments/model';
import { paymentMethodName, tookMoney } from '../payments/view';
import { buyerLines, formatPercentage, paymentTerms, sellerDetails, taxLineLabel, taxNotes } from './legal-text';
import type { Invoice, InvoiceItem } from './model';
import { amountDue, PAYABLE_STATUSES } from './status';
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

/** A line as a document shows it: an invoice's item or a credit note's. */
export type DocumentLine = Pick<InvoiceItem, 'description' | 'quantity_units' | 'unit_price' | 'amount'> & { tax_rate_ids: number[] | null };

/** What a tax breakdown and its totals are made of, on an invoice or a credit note. */
type TaxFigures = { total_excluding_tax: number; rounding_amount: number; tax_breakdown: readonly TaxBreakdownLine[] | null };

/** A credit note's figures as its PDF shows them (its row, which credit-notes/ defines). */
export interface CreditNoteFigures extends TaxFigures {
  number: string;
  currency: string;
  livemode: boolean;
  created_at: string;
  reason: keyof typeof REASON_NAMES | null;
  memo: string | null;
  tax_breakdown: TaxBreakdownLine[];
  tax_exempt: TaxExempt;
  total: number;
  amount_applied: number;
  amount_refunded: number;
  out_of_band_amount: number;
  buyer: BuyerSnapshot;
}

/** Everything a credit note's PDF shows, read by InvoiceDocuments' caller. */
export interface CreditNoteDocument {
  creditNote: CreditNoteFigures;
  items: DocumentLine[];
  seller: SellerSnapshot;
  /** The number of the invoice it corrects, and the buyer's references on it. */
  invoiceNumber: string;
  references: { buyer_reference: string | null; purchase_order: string | null };
}

const REASON_NAMES = {
  duplicate: 'Duplicate',
  fraudulent: 'Fraudulent',
  order_change: 'Order changed',
  product_unsatisfactory: 'Product unsatisfactory',
  other: 'Other',
};

const BODY: TextStyle = { size: 9.5 };
const BOLD: TextStyle = { size: 9.5, weight: 'bold' };
const MUTED: TextStyle = { size: 9.5, color: MUTED_COLOR };
const SMALL: TextStyle = { size: 8, color: MUTED_COLOR };
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
  return (invoice.status === 'draft' || PAYABLE_STATUSES.includes(invoice.status)) && amountDue(invoice) > 0;
}

function pdfFilename(invoice: Invoice): string {
  const name = invoice.number ?? `draft-${invoice.id}`;
  return isReceipt(invoice) ? `receipt-${name}.pdf` : `${name}.pdf`;
}

/** The invoice's PDF; with `attachment` (its e-invoice), a PDF/A-3b Factur-X file that carries it. */
export async function invoicePdf(document: InvoiceDocument, attachment?: PdfAttachment): Promise<PdfFile> {
  const { invoice, seller } = document;
  const receipt = isReceipt(invoice);
  const number = invoice.number ?? 'Draft';
  const sellerName = oneLine(seller.legal_name ?? '');
  const layout = new PdfLayout({
    title: `${receipt ? 'Receipt' : 'Invoice'} ${number} from ${sellerName}`,
    author: sellerName,
    createdAt: new Date(invoice.updated_at),
    attachment,
  });
  const money = (minor: number) => formatMoney(minor, invoice.currency);

  heading(layout, { ...document, sellerName, title: receipt ? 'RECEIPT' : 'INVOICE', livemode: invoice.livemode, facts: invoiceFacts(document, receipt), buyerLabel: 'BILL TO', references: invoice });
  itemsTable(layout, { items: document.items, defaultRateIds: invoice.default_tax_rate_ids ?? [], breakdown: invoice.tax_breakdown ?? [] }, money);
  totals(layout, invoiceTotals(invoice, document.payments, money));
  taxNotesSection(layout, document, invoice.tax_breakdown ?? [], invoice.tax_exempt);
  paymentsTable(layout, document.payments, money);
  if (invoice.notes) section(layout, 'Notes', () => layout.paragraph(invoice.notes as string, BODY));
  paymentInstructions(layout, document);
  footer(layout, seller);

  const content = await layout.finish(`${sellerName} · ${receipt ? 'Receipt' : 'Invoice'} ${number}`);
  return { filename: pdfFilename(invoice), content };
}

/**
 * A credit note: the document that corrects an invoice, with both parties as the invoice names them,
 * the invoice it corrects, its lines and their tax per rate, and how its total was settled. With
 * `attachment`, a PDF/A-3b Factur-X file that carries its e-invoice.
 */
export async function creditNotePdf(document: CreditNoteDocument, attachment?: PdfAttachment): Promise<PdfFile> {
  const { creditNote: note, seller } = document;
  const sellerName = oneLine(seller.legal_name ?? '');
  const layout = new PdfLayout({ title: `Credit note ${note.number} from ${sellerName}`, author: sellerName, createdAt: new Date(note.created_at), attachment });
  const money = (minor: number) => formatMoney(minor, note.currency);
  const facts: [string, string][] = [
    ['Credit note number', note.number],
    ['Issue date', note.created_at.slice(0, 10)],
    ['Corrects invoice', document.invoiceNumber],
    ...(note.reason ? [['Reason', REASON_NAMES[note.reason]] as [string, string]] : []),
  ];
  heading(layout, { seller, buyer: note.buyer, sellerName, title: 'CREDIT NOTE', livemode: note.livemode, facts, buyerLabel: 'CREDIT TO', references: document.references });
  layout.paragraph(`This credit note corrects invoice ${document.invoiceNumber}: the amounts below are credited to the buyer.`, BODY);
  layout.y += 10;
  itemsTable(layout, { items: document.items, defaultRateIds: [], breakdown: note.tax_breakdown }, money);
  const emphasis: TextStyle = { size: 11, weight: 'bold' };
  totals(layout, [
    ...taxRows(note, money),
    ['Total credited', money(note.total), emphasis],
    ...(note.amount_applied > 0 ? [['Taken off the amount due', money(note.amount_applied), BODY] as TotalsRow] : []),
    ...(note.amount_refunded > 0 ? [['Refunded', money(note.amount_refunded), BODY] as TotalsRow] : []),
    ...(note.out_of_band_amount > 0 ? [['Settled outside this service', money(note.out_of_band_amount), BODY] as TotalsRow] : []),
  ]);
  taxNotesSection(layout, { buyer: note.buyer }, note.tax_breakdown, note.tax_exempt);
  if (note.memo) section(layout, 'Memo', () => layout.paragraph(note.memo as string, BODY));
  footer(layout, seller);
  const content = await layout.finish(`${sellerName} · Credit note ${note.number}`);
  return { filename: `${note.number}.pdf`, content };
}

/** A name is one line wherever it appears: line breaks in it would push the document's facts down. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function taxNotesSection(layout: PdfLayout, { buyer }: Pick<InvoiceParties, 'buyer'>, breakdown: readonly TaxBreakdownLine[], taxExempt: TaxExempt): void {
  const notes = taxNotes(breakdown, buyer, taxExempt);
  if (notes.length) section(layout, 'Tax notes', () => notes.forEach((note) => layout.paragraph(note, BODY)));
}

function footer(layout: PdfLayout, seller: SellerSnapshot): void {
  if (!seller.invoice_footer) return;
  layout.y += 12;
  layout.ensureRoom(lineHeight(SMALL) * 2);
  layout.paragraph(seller.invoice_footer, SMALL);
}

/** What a document's heading shows: its title and facts, and both parties. */
interface Heading extends InvoiceParties {
  sellerName: string;
  title: string;
  livemode: boolean;
  facts: [string, string][];
  /** Over the buyer's block: BILL TO, CREDIT TO. */
  buyerLabel: string;
  /** The buyer's references printed under its block. */
  references: { buyer_reference: string | null; purchase_order: string | null };
}

/** An invoice's facts: its number and dates, its terms while it asks for money, how it was paid once a receipt. */
function invoiceFacts(document: InvoiceDocument, receipt: boolean): [string, string][] {
  const { invoice } = document;
  return [
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
    ...(invoice.credit_note_ids?.length ? [['Corrected by', `${invoice.credit_note_ids.length === 1 ? 'a credit note' : `${invoice.credit_note_ids.length} credit notes`}`] as [string, string]] : []),
    ['Status', STATUS_NAMES[invoice.status]],
  ];
}

/**
 * The seller's name and the title; under them, the seller's block and then the buyer's on the left,
 * the document's facts on the right.
 */
function heading(layout: PdfLayout, { seller, buyer, sellerName, title: titleText, livemode, facts, buyerLabel, references }: Heading): void {
  const title: TextStyle = { size: 20, weight: 'bold' };
  const titleLine = layout.line(titleText, title);
  const nameWidth = layout.width - titleLine.width - 24;
  const nameCut = layout.wrap(sellerName, ISSUER_NAME, nameWidth).length > NAME_LINES;
  const name = layout.clamp(sellerName, ISSUER_NAME, nameWidth, NAME_LINES);
  layout.drawLine(titleLine, layout.left, layout.y, title, { align: 'right', width: layout.width });
  layout.y += Math.max(layout.drawLines(name, layout.left, layout.y, ISSUER_NAME), lineHeight(title)) + 6;
  if (!livemode) {
    layout.paragraph('TEST MODE: no real payment is taken.', { size: 9, weight: 'bold', color: '#8250df' });
  }
  layout.y += 8;

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
  layout.paragraph(buyerLabel, LABEL, { width: columnWidth });
  layout.y += 2;
  buyerLines(buyer, references).forEach((text, index) => layout.paragraph(text, index === 0 ? BOLD : BODY, { width: columnWidth }));
  layout.y = (layout.page === page ? Math.max(layout.y, right) : layout.y) + 22;
}

/** "Payment method: Card", or the methods of several payments. */
function methodsOf(payments: readonly Payment[]): [string, string][] {
  const methods = [...new Set(payments.filter(tookMoney).map((payment) => paymentMethodName(payment.method)))];
  return methods.length ? [[methods.length > 1 ? 'Payment methods' : 'Payment method', methods.join(', ')]] : [];
}

/** A document's lines, the rates (as applied) that tax them, and the rates that lines naming none take. */
interface Lines {
  items: readonly DocumentLine[];
  defaultRateIds: readonly number[];
  breakdown: readonly TaxBreakdownLine[];
}

/** The items; with a tax column, each line's rates as applied, when the document has any rate. */
function itemsTable(layout: PdfLayout, { items, defaultRateIds, breakdown }: Lines, money: (minor: number) => string): void {
  const quantity = new Intl.NumberFormat('en-US', { maximumFractionDigits: 4 });
  const percentages = new Map(breakdown.map((line) => [line.tax_rate_id, formatPercentage(fromPercentageUnits(line.percentage_units))]));
  // An item that names no rates takes the invoice's defaults.
  const ratesOf = (item: DocumentLine) => (item.tax_rate_ids ?? defaultRateIds).flatMap((id) => percentages.get(id) ?? []).join(', ') || '—';
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
    items.map((item) => [
      item.description,
      quantity.format(fromQuantityUnits(item.quantity_units)),
      money(item.unit_price),
      ...(taxed ? [ratesOf(item)] : []),
      money(item.amount),
    ]),
  );
}

/** A line of the totals block: its label, its amount and their style. */
type TotalsRow = [string, string, TextStyle];

/**
 * With taxes (or a rounding), the subtotal excluding tax, one line per rate and the rounding, which
 * come before the total; a document without either has only its total, which is its subtotal.
 */
function taxRows(figures: TaxFigures, money: (minor: number) => string): TotalsRow[] {
  const breakdown = figures.tax_breakdown ?? [];
  if (!breakdown.length && figures.rounding_amount === 0) return [];
  return [
    ['Subtotal', money(figures.total_excluding_tax), BODY],
    ...breakdown.map((line): TotalsRow => [taxLineLabel(line.display_name, fromPercentageUnits(line.percentage_units), money(line.taxable_amount)), money(line.tax_amount), BODY]),
    ...(figures.rounding_amount !== 0 ? [['Rounding', money(figures.rounding_amount), BODY] as TotalsRow] : []),
  ];
}

/** An invoice's totals: its taxes and total, then what was paid and credited, and what is due. */
function invoiceTotals(invoice: Invoice, payments: readonly Payment[], money: (minor: number) => string): TotalsRow[] {
  const refunded = payments.some((payment) => (payment.amount_refunded ?? 0) > 0);
  const rows: TotalsRow[] = [...taxRows(invoice, money), ['Total', money(invoice.total), BODY]];
  // amount_paid is what was kept: refunds have come off it.
  if (!isReceipt(invoice) && (invoice.amount_paid > 0 || refunded)) rows.push([refunded ? 'Paid, net of refunds' : 'Paid', money(invoice.amount_paid), BODY]);
  if (invoice.amount_credited > 0) rows.push(['Credited', money(invoice.amount_credited), BODY]);
  const emphasis: TextStyle = { size: 11, weight: 'bold' };
  if (isReceipt(invoice)) rows.push(['Amount paid', money(invoice.amount_paid), emphasis]);
  else if (invoice.status !== 'void') rows.push(['Amount due', money(amountDue(invoice)), emphasis]);
  return rows;
}

function totals(layout: PdfLayout, rows: TotalsRow[]): void {  // Labels on the left of the block, amounts ending at the right edge, each amount on one line: the
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

/**
 * The payments that took money, with each one's reference (a bank transfer's, the gateway's payment
 * id), which the client quotes to the seller or their bank: a reference column when any has one.
 */
function paymentsTable(layout: PdfLayout, payments: readonly Payment[], money: (minor: number) => string): void {
  const rows = payments.filter(tookMoney);
  if (!rows.length) return;
  const refunds = rows.some((payment) => (payment.amount_refunded ?? 0) > 0);
  const references = rows.some((payment) => payment.gateway_reference);
  layout.y += 8;
  table(
    layout,
    [
      { label: 'Date', width: 90, align: 'left' },
      ...(references
        ? [{ label: 'Method', width: 70, align: 'left' } as Column, { label: 'Reference', wraps: true, align: 'left' } as Column]
        : [{ label: 'Method', wraps: true, align: 'left' } as Column]),
      { label: 'Amount', width: 100, align: 'right' },
      ...(refunds ? [{ label: 'Refunded', width: 100, align: 'right' } as Column] : []),
    ],
    rows.map((payment) => [
      (payment.paid_at ?? payment.created_at).slice(0, 10),
      paymentMethodName(payment.method),
      ...(references ? [payment.gateway_reference ?? '—'] : []),
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
