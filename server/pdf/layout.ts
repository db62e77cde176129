/**
 * Text set on A4 pages with PDFKit, in any script our fonts cover: lines broken by the Unicode line
 * breaking rules (between words, between CJK characters, inside a word only when it cannot fit),
 * each line drawn run by run on one baseline, and new pages when the cursor reaches the bottom.
 * PDFKit's own wrapper measures a line in one font, so mixed-script text is laid out here.
 */
import PDFDocument from 'pdfkit';
import LineBreaker from 'linebreak';
import { embedFacturX, PDFA3_OPTIONS, PdfAttachment } from './facturx';
import { registerFaces, Run, runsOf, Weight } from './fonts';

export interface TextStyle {
  size: number;
  weight?: Weight;
  color?: string;
}

export interface Line {
  runs: Run[];
  width: number;
}

/** The grey of labels and secondary text on every document (invoices, receipts, credit notes, contracts). */
export const MUTED_COLOR = '#57606a';
/** A section's small capital label (`BILL TO`, `SIGNATURE RECORD`). */
export const LABEL: TextStyle = { size: 8, weight: 'bold', color: MUTED_COLOR };
/** The issuer's name at the top of a document. */
export const ISSUER_NAME: TextStyle = { size: 16, weight: 'bold' };

export const A4 = { width: 595.28, height: 841.89 };
export const MARGIN = 50;
/** Room kept at the foot of every page for its footer line. */
const FOOTER_ROOM = 36;
const LINE_SPACING = 1.4;
/** Where the baseline sits below the top of a line, as a share of the font size. */
const ASCENT = 0.95;

export function lineHeight(style: TextStyle): number {
  return style.size * LINE_SPACING;
}

/** A line set in `style`, drawn `drop` points below the top it is given (see PdfLayout.fit). */
export interface FittedLine {
  line: Line;
  style: TextStyle;
  drop: number;
}

export interface DocumentInfo {
  title: string;
  author: string;
  /** Fixed, so the same record renders the same file. */
  createdAt: Date;
  /** An e-invoice to carry: the document is then PDF/A-3b with it embedded (Factur-X). */
  attachment?: PdfAttachment;
}

export class PdfLayout {
  /** Where the next block starts, from the top of the page. */
  y = MARGIN;
  readonly left = MARGIN;
  readonly right = A4.width - MARGIN;
  readonly bottom = A4.height - MARGIN - FOOTER_ROOM;
  /** Called after a page break, to repeat what heads each page (a table's header). */
  onNewPage: (() => void) | null = null;
  /** The page the cursor is on, from 1. */
  page = 1;

  private readonly doc: PDFKit.PDFDocument;
  private readonly registered = new Set<string>();

  constructor(info: DocumentInfo) {
    // No margins for PDFKit: every position is explicit, so it never starts a page on its own.
    // Every text is drawn in the TrueType faces of fonts.ts, which PDFKit embeds (PDF/A forbids the
    // standard fonts, which are not): PDFKit's default Helvetica is never referenced.
    this.doc = new PDFDocument({
      size: 'A4',
      margin: 0,
      bufferPages: true,
      info: { Title: info.title, Author: info.author, Creator: info.author, CreationDate: info.createdAt, ModDate: info.createdAt },
      ...(info.attachment ? PDFA3_OPTIONS : {}),
    });
    if (info.attachment) embedFacturX(this.doc, info.attachment, info.createdAt);
  }

  get width(): number {
    return this.right - this.left;
  }

  /** The runs of `text` in `style`, their faces registered on the document. */
  private runs(text: string, style: TextStyle): Run[] {
    const runs = runsOf(text, style.weight ?? 'regular');
    registerFaces(this.doc, this.registered, runs);
    return runs;
  }

  private measure(runs: readonly Run[], size: number): number {
    return runs.reduce((sum, run) => sum + this.doc.font(run.face.name).fontSize(size).widthOfString(run.text), 0);
  }

  /** `text` as one line, however wide (a label, a title). */
  line(text: string, style: TextStyle): Line {
    const runs = this.runs(text, style);
    return { runs, width: this.measure(runs, style.size) };
  }

  /** The width of `text` on one line. */
  widthOf(text: string, style: TextStyle): number {
    return this.line(text, style).width;
  }

  /**
   * `text` on one line no wider than `width`, in a smaller size if it must be: an amount is never
   * broken, since a piece of it reads as another amount. The smaller text keeps the baseline of
   * `style` (it is drawn `drop` lower).
   */
  fit(text: string, style: TextStyle, width: number, line: Line = this.line(text, style)): FittedLine {
    if (line.width <= width) return { line, style, drop: 0 };
    const size = Math.floor(((style.size * width) / line.width) * 10) / 10;
    const smaller = { ...style, size };
    return { line: this.line(text, smaller), style: smaller, drop: (style.size - size) * ASCENT };
  }

  /**
   * At most `maxLines` of `text` wrapped to `width`, the last ending in an ellipsis when some were
   * left out (a heading that must leave room for what follows it).
   */
  clamp(text: string, style: TextStyle, width: number, maxLines: number): Line[] {
    const lines = this.wrap(text, style, width);
    if (lines.length <= maxLines) return lines;
    const kept = lines.slice(0, maxLines);
    let last = [...kept[maxLines - 1].runs.map((run) => run.text).join('')];
    while (last.length && this.widthOf(`${last.join('').trimEnd()}…`, style) > width) last = last.slice(0, -1);
    kept[maxLines - 1] = this.line(`${last.join('').trimEnd()}…`, style);
    return kept;
  }

  /** `text` broken into lines no wider than `width` (a newline always breaks). */
  wrap(text: string, style: TextStyle, width: number): Line[] {
    const lines: Line[] = [];
    const push = (content: string) => lines.push(this.line(content.trimEnd(), style));
    const fits = (content: string) => this.widthOf(content.trimEnd(), style) <= width;
    for (const paragraph of text.split(/\r\n|\r|\n/)) {
      const breaker = new LineBreaker(paragraph);
      let line = '';
      // The line's width, summed word by word (to its trailing space): measuring the whole line again
      // at each word made a long description quadratic. Kerning across a word's edge is left out,
      // a fraction of a point.
      let lineWidth = 0;
      let start = 0;
      for (let next = breaker.nextBreak(); next; next = breaker.nextBreak()) {
        let word = paragraph.slice(start, next.position);
        start = next.position;
        const inked = word.trimEnd();
        const inkWidth = this.widthOf(inked, style);
        if (lineWidth + inkWidth <= width) {
          line += word;
          lineWidth += inked === word ? inkWidth : this.widthOf(word, style);
          continue;
        }
        if (line) push(line);
        // A word wider than the line (a long reference, a URL) is cut where it reaches the edge.
        while (!fits(word)) {
          const chars = [...word];
          // The longest prefix that fits, by halving: at least one character, so the loop always advances.
          let [low, high] = [1, chars.length - 1];
          while (low < high) {
            const middle = Math.ceil((low + high) / 2);
            if (fits(chars.slice(0, middle).join(''))) low = middle;
            else high = middle - 1;
          }
          push(chars.slice(0, low).join(''));
          word = chars.slice(low).join('');
        }
        line = word;
        lineWidth = this.widthOf(word, style);
      }
      push(line);
    }
    return lines;
  }

  /** Draws one line with its top at `top`; `align: 'right'` ends it at `x + width`. */
  drawLine(line: Line, x: number, top: number, style: TextStyle, options: { align?: 'left' | 'right'; width?: number; link?: string } = {}): void {
    let at = options.align === 'right' && options.width !== undefined ? x + options.width - line.width : x;
    const baseline = top + style.size * ASCENT;
    this.doc.fillColor(style.color ?? '#1f2328');
    for (const run of line.runs) {
      this.doc.font(run.face.name).fontSize(style.size).text(run.text, at, baseline, { lineBreak: false, baseline: 'alphabetic' });
      at += this.doc.widthOfString(run.text);
    }
    if (options.link) this.doc.link(x, top, line.width, lineHeight(style), options.link);
  }

  /** Lines drawn one under the other from `top`; returns the height they took. */
  drawLines(lines: readonly Line[], x: number, top: number, style: TextStyle, options: { align?: 'left' | 'right'; width?: number } = {}): number {
    lines.forEach((line, index) => this.drawLine(line, x, top + index * lineHeight(style), style, options));
    return lines.length * lineHeight(style);
  }

  /**
   * A block of text at the cursor, across the content width unless told: lines that do not fit on
   * this page continue on the next.
   */
  paragraph(text: string, style: TextStyle, options: { x?: number; width?: number; link?: string } = {}): void {
    const x = options.x ?? this.left;
    for (const line of this.wrap(text, style, options.width ?? this.right - x)) {
      this.ensureRoom(lineHeight(style));
      this.drawLine(line, x, this.y, style, { link: options.link });
      this.y += lineHeight(style);
    }
  }

  /** Starts a new page unless `height` fits below the cursor (a block taller than a page starts one anyway, once). */
  ensureRoom(height: number): void {
    if (this.y + height > this.bottom && this.y > MARGIN) this.newPage();
  }

  newPage(): void {
    this.doc.addPage({ size: 'A4', margin: 0 });
    this.page += 1;
    this.y = MARGIN;
    this.onNewPage?.();
  }

  /** A horizontal rule across the content width at the cursor. */
  rule(color = '#d0d7de'): void {
    this.doc.moveTo(this.left, this.y).lineTo(this.right, this.y).lineWidth(0.75).strokeColor(color).stroke();
  }

  /** A filled band behind what follows (a table's header). */
  band(top: number, height: number, color: string): void {
    this.doc.rect(this.left, top, this.width, height).fill(color);
  }

  /**
   * Writes the foot of every page, `footer` on the left (its first line, should it be long) and
   * `Page n of m` on the right, then the finished file.
   */
  async finish(footer: string): Promise<Buffer> {
    const style: TextStyle = { size: 8, color: '#57606a' };
    const { start, count } = this.doc.bufferedPageRange();
    const top = A4.height - MARGIN - lineHeight(style);
    for (let index = start; index < start + count; index += 1) {
      this.doc.switchToPage(index);
      const numbering = this.line(`Page ${index - start + 1} of ${count}`, style);
      this.drawLine(numbering, this.left, top, style, { align: 'right', width: this.width });
      const [text] = this.wrap(footer, style, this.width - numbering.width - 24);
      this.drawLine(text, this.left, top, style);
    }
    const chunks: Buffer[] = [];
    const done = new Promise<Buffer>((resolve, reject) => {
      this.doc.on('data', (chunk: Buffer) => chunks.push(chunk));
      this.doc.on('end', () => resolve(Buffer.concat(chunks)));
      this.doc.on('error', reject);
    });
    this.doc.end();
    return done;
  }
}
