/**
 * Page geometry and drawing helpers for the invoice layout and the Markdown renderer; PDF points,
 * origin top left. Page breaks are decided here, not by pdfkit's overflow: a row or totals block
 * is measured and moved whole, so nothing is split mid-row (free text may still flow).
 */
import PDFDocument from 'pdfkit';
import { defaultFont, FONT, installFontFallback, registerFonts, type FontStyle } from './fonts';
import { installOneLineText } from './oneLineText';
import { deflateStreamsFast } from './fastDeflate';

/** A4 in points. */
export const PAGE_WIDTH = 595.28;
export const PAGE_HEIGHT = 841.89;

export const MARGIN = { top: 62, bottom: 92, left: 57, right: 45 } as const;
export const CONTENT_LEFT: number = MARGIN.left;
export const CONTENT_RIGHT = PAGE_WIDTH - MARGIN.right;
export const CONTENT_WIDTH = CONTENT_RIGHT - CONTENT_LEFT;
/** Lowest y content may reach; the footer lives below it. */
export const CONTENT_BOTTOM = PAGE_HEIGHT - MARGIN.bottom;

export const COLOR = {
  text: '#1a1a1a',
  muted: '#5a5a5a',
  rule: '#9a9a9a',
  faint: '#d0d0d0',
  headerFill: '#ececec',
  codeFill: '#f3f3f3',
  watermark: '#e4e4e4',
  accent: '#b00020',
} as const;

export interface TextStyle {
  font?: FontStyle;
  size?: number;
  color?: string;
}

export function setStyle(doc: PDFKit.PDFDocument, style: TextStyle = {}): PDFKit.PDFDocument {
  return doc
    .font(FONT[style.font ?? 'regular'])
    .fontSize(style.size ?? 9.5)
    .fillColor(style.color ?? COLOR.text);
}

/** Starts a new page when `height` does not fit; returns true if it did. */
export function ensureSpace(doc: PDFKit.PDFDocument, height: number): boolean {
  if (doc.y + height <= CONTENT_BOTTOM) return false;
  doc.addPage();
  return true;
}

/**
 * Text for a one-line slot (footer, sender line, running header, names): the lines a user
 * entered (a company name may contain a line break) joined with " · ". pdfkit starts a new
 * line at every line break even with lineBreak: false, so a second line would overprint
 * whatever lies below the slot.
 */
export function singleLine(text: string): string {
  return text
    .split(/\r\n|[\r\n\u2028\u2029\v\f]/)
    .map((l) => l.trim())
    .filter(Boolean)
    .join(' · ');
}

/** Draws one line of text at a fixed position without wrapping or moving to another page. */
export function textAt(
  doc: PDFKit.PDFDocument,
  text: string,
  x: number,
  y: number,
  opts: { width?: number; align?: 'left' | 'right' | 'center' } & TextStyle = {},
): void {
  setStyle(doc, opts);
  doc.text(singleLine(text), x, y, { width: opts.width, align: opts.align ?? 'left', lineBreak: false });
}

/** Shrinks a one-line text down to `minSize` to fit `width`, then shortens it with "…". */
export function fitLine(doc: PDFKit.PDFDocument, text: string, width: number, size: number, minSize: number): { text: string; size: number } {
  const line = singleLine(text);
  setStyle(doc, { size });
  const natural = doc.widthOfString(line);
  if (natural <= width) return { text: line, size };
  const shrunk = Math.max(minSize, Math.floor((size * width * 10) / natural) / 10);
  setStyle(doc, { size: shrunk });
  let fitted = line;
  while (fitted.length > 1 && doc.widthOfString(fitted) > width) fitted = `${fitted.slice(0, -2)}…`;
  return { text: fitted, size: shrunk };
}

export function hRule(
  doc: PDFKit.PDFDocument,
  y: number,
  x1: number = CONTENT_LEFT,
  x2: number = CONTENT_RIGHT,
  color: string = COLOR.rule,
  width = 0.5,
): void {
  doc.save().lineWidth(width).strokeColor(color).moveTo(x1, y).lineTo(x2, y).stroke().restore();
}

/** Info /Creator and /Producer (and xmp:CreatorTool, pdf:Producer in a PDF/A's XMP). */
export const CREATOR = 'accounting-service';
export const PRODUCER = 'PDFKit';

export interface DocumentInfo {
  title: string;
  author: string;
  subject: string;
  keywords?: string;
  /** Fixed timestamp (the invoice's updatedAt) so identical input yields identical bytes. */
  date: Date;
}

/**
 * A4 document with DejaVu as default font and pages kept in memory (bufferPages) so
 * "Seite X von Y" can be written once the total is known.
 */
export function createDocument(info: DocumentInfo, pdfA: boolean): PDFKit.PDFDocument {
  const options: PDFKit.PDFDocumentOptions = {
    size: 'A4',
    margins: { ...MARGIN },
    bufferPages: true,
    autoFirstPage: false,
    lang: 'de',
    displayTitle: true,
    info: {
      Title: info.title,
      Author: info.author,
      Subject: info.subject,
      // pdfkit serialises every key it is given; an undefined one crashes end().
      ...(info.keywords ? { Keywords: info.keywords } : {}),
      Creator: CREATOR,
      Producer: PRODUCER,
      CreationDate: info.date,
      ModDate: info.date,
    },
    ...(pdfA ? { subset: 'PDF/A-3b' as const, pdfVersion: '1.7' as const } : { pdfVersion: '1.7' as const }),
  };
  // The constructor also instantiates a default font; handing it DejaVu keeps the standard
  // (non-embedded) Helvetica out of the file entirely.
  const doc = new PDFDocument({ ...options, font: defaultFont() });
  registerFonts(doc);
  installFontFallback(doc);
  installOneLineText(doc);
  deflateStreamsFast(doc);
  return doc;
}

/**
 * Runs `draw` on every new page before any content lands on it, with the caller's font,
 * size, colour and cursor restored afterwards: pdfkit may add a page in the middle of a
 * text() call, and that text must continue in its own style.
 */
export function onEveryNewPage(doc: PDFKit.PDFDocument, draw: (doc: PDFKit.PDFDocument) => void): void {
  doc.on('pageAdded', () => {
    // pdfkit keeps the current font and fill colour in these fields; there is no public getter.
    const internal = doc as unknown as { _font: unknown; _fontSize: number; _fillColor?: [string, number?] };
    const saved = { font: internal._font, size: internal._fontSize, fill: internal._fillColor, x: doc.x, y: doc.y };
    doc.save();
    draw(doc);
    doc.restore();
    internal._font = saved.font;
    doc.fontSize(saved.size);
    if (saved.fill) doc.fillColor(saved.fill[0], saved.fill[1]);
    doc.x = saved.x;
    doc.y = saved.y;
  });
}

/** Collects pdfkit's stream into one Buffer. */
export function toBuffer(doc: PDFKit.PDFDocument): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
    doc.end();
  });
}

/**
 * Writes into the bottom margin of every buffered page (footer, page numbers). pdfkit would
 * otherwise treat text below the bottom margin as overflow and add a page.
 */
export function forEachPage(doc: PDFKit.PDFDocument, draw: (pageIndex: number, pageCount: number) => void): void {
  const range = doc.bufferedPageRange();
  for (let i = range.start; i < range.start + range.count; i++) {
    doc.switchToPage(i);
    const bottom = doc.page.margins.bottom;
    const top = doc.page.margins.top;
    doc.page.margins.bottom = 0;
    doc.page.margins.top = 0;
    draw(i - range.start, range.count);
    doc.page.margins.bottom = bottom;
    doc.page.margins.top = top;
  }
}
