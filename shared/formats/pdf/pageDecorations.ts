/**
 * What every page carries regardless of content: the draft watermark (drawn when the page is
 * created, so it lies underneath the content), and — once all pages exist — the footer with
 * the seller's identity and bank data, a running header on follow-up pages and "Seite X von Y".
 */
import type { SellerView } from '../../domain/invoiceView';
import {
  COLOR,
  CONTENT_LEFT,
  CONTENT_RIGHT,
  CONTENT_WIDTH,
  PAGE_HEIGHT,
  PAGE_WIDTH,
  fitLine,
  forEachPage,
  hRule,
  onEveryNewPage,
  setStyle,
  textAt,
} from './layout';
import { footerColumns } from './parties';

/** The parts of fontkit's font object (reachable through pdfkit's embedded font) used below. */
interface GlyphSource {
  unitsPerEm: number;
  layout(text: string): { glyphs: Array<{ path: { toSVG(): string } }>; positions: Array<{ xAdvance: number }> };
}

/**
 * Draws the label as glyph outlines, not as text: a rotated text watermark gets interleaved
 * with the real content by text extractors (pdftotext, screen readers, copy & paste), while a
 * vector shape is ignored by them. The label stays machine-readable through the title badge
 * and the "ENTWURF" in every page's footer.
 */
export function installDraftWatermark(doc: PDFKit.PDFDocument, label: string): void {
  onEveryNewPage(doc, (d) => {
    setStyle(d, { font: 'bold', size: 110 });
    // pdfkit exposes no public accessor for the parsed font; its EmbeddedFont keeps it in .font.
    const font = (d as unknown as { _font: { font: GlyphSource } })._font.font;
    const size = 110;
    const scale = size / font.unitsPerEm;
    const run = font.layout(label);
    const width = run.positions.reduce((sum, p) => sum + p.xAdvance, 0) * scale;
    d.rotate(-50, { origin: [PAGE_WIDTH / 2, PAGE_HEIGHT / 2] });
    let x = PAGE_WIDTH / 2 - width / 2;
    const baseline = PAGE_HEIGHT / 2 + size * 0.36;
    run.glyphs.forEach((glyph, i) => {
      d.save();
      d.translate(x, baseline).scale(scale, -scale);
      d.path(glyph.path.toSVG()).fill(COLOR.watermark);
      d.restore();
      x += run.positions[i].xAdvance * scale;
    });
  });
}

export interface DecorationOptions {
  seller: SellerView;
  /** Printed at the top of pages 2..n, e.g. "Rechnung RE-2026-00001 vom 15.01.2026". */
  runningHeader: string;
  /** Printed before the page number on every page, e.g. "ENTWURF". */
  pageLabel?: string;
}

const FOOTER_RULE_Y = PAGE_HEIGHT - 80;

export function drawPageDecorations(doc: PDFKit.PDFDocument, opts: DecorationOptions): void {
  const columns = footerColumns(opts.seller).filter((c) => c.length > 0);
  const gap = 12;
  const colWidth = (CONTENT_WIDTH - gap * (columns.length - 1)) / Math.max(columns.length, 1);

  forEachPage(doc, (index, count) => {
    if (index > 0) {
      textAt(doc, opts.runningHeader, CONTENT_LEFT, 30, { size: 8, color: COLOR.muted, width: CONTENT_WIDTH });
      hRule(doc, 42, CONTENT_LEFT, CONTENT_RIGHT, COLOR.faint);
    }

    hRule(doc, FOOTER_RULE_Y, CONTENT_LEFT, CONTENT_RIGHT, COLOR.faint);
    columns.forEach((lines, i) => {
      const x = CONTENT_LEFT + i * (colWidth + gap);
      lines.slice(0, 5).forEach((line, j) => {
        const { text, size } = fitLine(doc, line, colWidth, 7, 5.5);
        textAt(doc, text, x, FOOTER_RULE_Y + 6 + j * 9, { size, color: COLOR.muted, width: colWidth });
      });
    });
    textAt(doc, `${opts.pageLabel ? `${opts.pageLabel} · ` : ''}Seite ${index + 1} von ${count}`, CONTENT_LEFT, PAGE_HEIGHT - 28, {
      size: 7.5,
      color: COLOR.muted,
      width: CONTENT_WIDTH,
      align: 'right',
    });
  });
}
