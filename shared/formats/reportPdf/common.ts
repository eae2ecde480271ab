import PDFDocument from 'pdfkit';
import { defaultFont, FONT, installFontFallback, registerFonts, type FontStyle } from '../pdf/fonts';

/**
 * Small pdfkit helpers for the report PDFs (U30 form, BWA). Same fonts as the invoice PDFs
 * (embedded DejaVu, never the non-embedded standard 14), German number and date formatting from
 * ../pdf/format.ts. Reports are plain PDF 1.7, not PDF/A: they are working documents, the filed
 * return is the XML.
 */
export const INK = { text: '#1a1a1a', muted: '#5a5a5a', rule: '#9a9a9a', fill: '#ececec', current: '#2f5d8a', prior: '#a8bdd4', negative: '#b00020' };

export function createReportDocument(opts: { title: string; author: string; landscape?: boolean; createdAt: Date }): PDFKit.PDFDocument {
  const doc = new PDFDocument({
    size: 'A4',
    layout: opts.landscape ? 'landscape' : 'portrait',
    margins: { top: 50, bottom: 50, left: 50, right: 45 },
    bufferPages: true,
    lang: 'de',
    pdfVersion: '1.7',
    info: { Title: opts.title, Author: opts.author, Creator: 'accounting-service', Producer: 'PDFKit', CreationDate: opts.createdAt },
    font: defaultFont(),
  });
  registerFonts(doc);
  // Names in reports (customers, suppliers) may be Chinese, Japanese or Korean too.
  installFontFallback(doc);
  return doc;
}

export function style(doc: PDFKit.PDFDocument, font: FontStyle = 'regular', size = 9, color = INK.text): PDFKit.PDFDocument {
  return doc.font(FONT[font]).fontSize(size).fillColor(color);
}

export function cell(doc: PDFKit.PDFDocument, text: string, x: number, y: number, width: number, align: 'left' | 'right' | 'center' = 'left'): void {
  doc.text(text, x, y, { width, align, lineBreak: false });
}

export function rule(doc: PDFKit.PDFDocument, y: number, x1: number, x2: number, color = INK.rule, width = 0.5): void {
  doc.save().lineWidth(width).strokeColor(color).moveTo(x1, y).lineTo(x2, y).stroke().restore();
}

export function footer(doc: PDFKit.PDFDocument, left: string): void {
  const range = doc.bufferedPageRange();
  for (let i = range.start; i < range.start + range.count; i++) {
    doc.switchToPage(i);
    const bottom = doc.page.margins.bottom;
    doc.page.margins.bottom = 0;
    const y = doc.page.height - 35;
    const w = doc.page.width - doc.page.margins.left - doc.page.margins.right;
    style(doc, 'regular', 7.5, INK.muted);
    cell(doc, left, doc.page.margins.left, y, w * 0.7);
    cell(doc, `Seite ${i - range.start + 1} von ${range.count}`, doc.page.margins.left, y, w, 'right');
    doc.page.margins.bottom = bottom;
  }
}

const viennaStamp = new Intl.DateTimeFormat('de-AT', { timeZone: 'Europe/Vienna', dateStyle: 'medium', timeStyle: 'short' });
export const createdLabel = (at: Date) => `Erstellt am ${viennaStamp.format(at)}`;
