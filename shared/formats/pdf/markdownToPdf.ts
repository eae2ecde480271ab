/**
 * Renders Markdown into an open pdfkit document, from `marked`'s lexer tokens (no hand-written
 * Markdown parsing). Supported: headings, paragraphs with bold/italic/strikethrough/inline code/
 * links, bullet and numbered lists (nested), tables (header row repeated after a page break),
 * code blocks, block quotes and horizontal rules. Raw HTML is printed as text, never
 * interpreted; images are printed as their alt text (the PDF must not fetch anything).
 *
 * Inline runs use pdfkit's `continued` text so a paragraph can mix fonts and still wrap.
 */
import { marked, type Token, type Tokens } from 'marked';
import { FONT, type FontStyle } from './fonts';
import { COLOR, CONTENT_BOTTOM, CONTENT_LEFT, CONTENT_RIGHT, ensureSpace, hRule, setStyle } from './layout';

export interface MarkdownOptions {
  /** Left edge and width of the text column; defaults to the page's content area. */
  left?: number;
  width?: number;
  /** Body font size; headings scale from it. */
  fontSize?: number;
}

interface Ctx {
  doc: PDFKit.PDFDocument;
  left: number;
  width: number;
  size: number;
  color: string;
  /** Style inherited from an enclosing block (a block quote is italic). */
  italic: boolean;
}

interface Run {
  text: string;
  bold: boolean;
  italic: boolean;
  code: boolean;
  strike: boolean;
}

const HEADING_SCALE: Record<number, number> = { 1: 1.75, 2: 1.4, 3: 1.18 };
const LIST_INDENT = 16;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', '#39': "'" };

/** marked leaves HTML entities as written ("&amp;"); a PDF shows characters. */
function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const code = name[1].toLowerCase() === 'x' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code < 0x110000 ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

function fontFor(run: Pick<Run, 'bold' | 'italic' | 'code'>): FontStyle {
  if (run.code) return 'mono';
  if (run.bold && run.italic) return 'boldItalic';
  if (run.bold) return 'bold';
  if (run.italic) return 'italic';
  return 'regular';
}

/** Flattens inline tokens into styled text runs. */
function inlineRuns(tokens: Token[] | undefined, style: Omit<Run, 'text'>, out: Run[] = []): Run[] {
  for (const t of tokens ?? []) {
    switch (t.type) {
      case 'strong':
        inlineRuns((t as Tokens.Strong).tokens, { ...style, bold: true }, out);
        break;
      case 'em':
        inlineRuns((t as Tokens.Em).tokens, { ...style, italic: true }, out);
        break;
      case 'del':
        inlineRuns((t as Tokens.Del).tokens, { ...style, strike: true }, out);
        break;
      case 'codespan':
        out.push({ ...style, code: true, text: decodeEntities((t as Tokens.Codespan).text) });
        break;
      case 'br':
        out.push({ ...style, text: '\n' });
        break;
      case 'link': {
        const link = t as Tokens.Link;
        inlineRuns(link.tokens, style, out);
        const label = link.text.trim();
        if (link.href && link.href !== label && !link.href.startsWith('mailto:' + label)) {
          out.push({ ...style, text: ` (${link.href})` });
        }
        break;
      }
      case 'image':
        out.push({ ...style, italic: true, text: `[Bild: ${(t as Tokens.Image).text || (t as Tokens.Image).href}]` });
        break;
      case 'text': {
        const text = t as Tokens.Text;
        if (text.tokens?.length) inlineRuns(text.tokens, style, out);
        else out.push({ ...style, text: decodeEntities(text.text) });
        break;
      }
      case 'escape':
      case 'html':
      default:
        out.push({ ...style, text: decodeEntities('text' in t && typeof t.text === 'string' ? t.text : t.raw) });
    }
  }
  return out;
}

/** Soft line breaks inside a paragraph are spaces in Markdown. */
function normaliseRuns(runs: Run[]): Run[] {
  return runs
    .map((r) => (r.text === '\n' ? r : { ...r, text: r.text.replace(/\s*\n\s*/g, ' ') }))
    .filter((r) => r.text.length > 0);
}

function plainText(tokens: Token[] | undefined): string {
  return inlineRuns(tokens, { bold: false, italic: false, code: false, strike: false })
    .map((r) => r.text)
    .join('');
}

/** Writes runs as one wrapped paragraph at (x, doc.y). */
function writeRuns(ctx: Ctx, runs: Run[], x: number, width: number, size: number, extra: { bold?: boolean } = {}): void {
  const { doc } = ctx;
  const list = normaliseRuns(runs);
  if (list.length === 0) return;
  setStyle(doc, { size, color: ctx.color });
  ensureSpace(doc, doc.currentLineHeight(true) + 2);
  list.forEach((run, i) => {
    const font = fontFor({ bold: run.bold || !!extra.bold, italic: run.italic || ctx.italic, code: run.code });
    doc.font(FONT[font]).fontSize(run.code ? size * 0.92 : size).fillColor(ctx.color);
    const options: PDFKit.Mixins.TextOptions = { continued: i < list.length - 1, strike: run.strike, lineGap: 1.5 };
    if (i === 0) doc.text(run.text, x, doc.y, { ...options, width });
    else doc.text(run.text, options);
  });
  doc.x = ctx.left;
}

function renderHeading(ctx: Ctx, t: Tokens.Heading): void {
  const size = ctx.size * (HEADING_SCALE[t.depth] ?? 1.05);
  // Keep a heading together with at least two lines of what follows.
  ensureSpace(ctx.doc, size * 1.4 + ctx.size * 3);
  ctx.doc.y += t.depth <= 2 ? size * 0.5 : size * 0.3;
  writeRuns(ctx, inlineRuns(t.tokens, plain()), ctx.left, ctx.width, size, { bold: true });
  if (t.depth === 1) hRule(ctx.doc, ctx.doc.y + 1, ctx.left, ctx.left + ctx.width, COLOR.faint);
  ctx.doc.y += size * 0.35;
}

function plain(): Omit<Run, 'text'> {
  return { bold: false, italic: false, code: false, strike: false };
}

function renderList(ctx: Ctx, list: Tokens.List): void {
  const start = typeof list.start === 'number' ? list.start : 1;
  list.items.forEach((item, index) => {
    const marker = list.ordered ? `${start + index}.` : item.task ? (item.checked ? '☑' : '☐') : '•';
    const { doc } = ctx;
    setStyle(doc, { size: ctx.size, color: ctx.color });
    ensureSpace(doc, doc.currentLineHeight(true) + 2);
    const markerY = doc.y;
    doc.text(marker, ctx.left, markerY, { width: LIST_INDENT - 3, align: list.ordered ? 'right' : 'left', lineBreak: false });
    doc.y = markerY;
    const inner: Ctx = { ...ctx, left: ctx.left + LIST_INDENT + (list.ordered ? 2 : 0), width: ctx.width - LIST_INDENT - (list.ordered ? 2 : 0) };
    renderBlocks(inner, item.tokens.filter((tok) => tok.type !== 'checkbox'), { tight: !list.loose });
  });
  ctx.doc.x = ctx.left;
  ctx.doc.y += ctx.size * 0.3;
}

function renderCode(ctx: Ctx, code: Tokens.Code): void {
  const { doc } = ctx;
  const size = ctx.size * 0.88;
  setStyle(doc, { font: 'mono', size });
  const lineHeight = doc.currentLineHeight(true) + 1;
  const lines = code.text.split('\n');
  doc.y += 2;
  for (const line of lines) {
    // Long lines wrap; measure them so the shaded background covers them.
    setStyle(doc, { font: 'mono', size });
    const h = Math.max(lineHeight, doc.heightOfString(line || ' ', { width: ctx.width - 12 }));
    ensureSpace(doc, h);
    const y = doc.y;
    doc.save().rect(ctx.left, y, ctx.width, h).fill(COLOR.codeFill).restore();
    setStyle(doc, { font: 'mono', size, color: ctx.color });
    doc.text(line || ' ', ctx.left + 6, y + 0.5, { width: ctx.width - 12 });
    doc.y = y + h;
  }
  doc.x = ctx.left;
  doc.y += ctx.size * 0.6;
}

function renderBlockquote(ctx: Ctx, quote: Tokens.Blockquote): void {
  const { doc } = ctx;
  const startPage = pageIndex(doc);
  const top = doc.y;
  renderBlocks({ ...ctx, left: ctx.left + 12, width: ctx.width - 12, color: COLOR.muted, italic: true }, quote.tokens);
  // The bar marks the quote on the page where it ends (from the top margin if it crossed pages).
  const barTop = pageIndex(doc) === startPage ? top : doc.page.margins.top;
  doc.save().lineWidth(2.5).strokeColor(COLOR.faint).moveTo(ctx.left + 3, barTop).lineTo(ctx.left + 3, doc.y - 4).stroke().restore();
  doc.x = ctx.left;
}

function pageIndex(doc: PDFKit.PDFDocument): number {
  const range = doc.bufferedPageRange();
  return range.start + range.count - 1;
}

function renderTable(ctx: Ctx, table: Tokens.Table): void {
  const { doc } = ctx;
  const size = ctx.size * 0.9;
  const pad = 4;
  const cols = table.header.length;
  const header = table.header.map((c) => plainText(c.tokens));
  const rows = table.rows.map((r) => r.map((c) => plainText(c.tokens)));

  // Column widths follow the content: each column gets its longest word as a minimum and
  // shares the rest in proportion to its text length.
  setStyle(doc, { size });
  const longestWord = (s: string) => Math.max(0, ...s.split(/\s+/).map((w) => doc.widthOfString(w)));
  const minW = header.map((h, i) => Math.max(longestWord(h), ...rows.map((r) => longestWord(r[i] ?? ''))) + 2 * pad);
  const wantW = header.map((h, i) => Math.max(doc.widthOfString(h), ...rows.map((r) => doc.widthOfString(r[i] ?? ''))) + 2 * pad);
  let widths = wantW;
  const totalWant = wantW.reduce((a, b) => a + b, 0);
  if (totalWant > ctx.width) {
    const totalMin = minW.reduce((a, b) => a + b, 0);
    const spare = Math.max(0, ctx.width - totalMin);
    const extra = wantW.map((w, i) => w - minW[i]);
    const extraSum = extra.reduce((a, b) => a + b, 0) || 1;
    widths = minW.map((m, i) => m + (spare * extra[i]) / extraSum);
    const sum = widths.reduce((a, b) => a + b, 0);
    if (sum > ctx.width) widths = widths.map((w) => (w * ctx.width) / sum);
  } else {
    // Stretch to the full width so tables line up with the text column.
    widths = wantW.map((w) => (w * ctx.width) / totalWant);
  }
  const xs = widths.map((_, i) => ctx.left + widths.slice(0, i).reduce((a, b) => a + b, 0));
  const align = (i: number): 'left' | 'right' | 'center' => (table.align[i] === 'right' ? 'right' : table.align[i] === 'center' ? 'center' : 'left');

  const measure = (cells: string[], bold: boolean) => {
    setStyle(doc, { font: bold ? 'bold' : 'regular', size });
    return Math.max(...cells.map((c, i) => doc.heightOfString(c || ' ', { width: widths[i] - 2 * pad }))) + 2 * pad;
  };
  const drawRow = (cells: string[], bold: boolean, y: number, h: number) => {
    if (bold) doc.save().rect(ctx.left, y, ctx.width, h).fill(COLOR.headerFill).restore();
    setStyle(doc, { font: bold ? 'bold' : 'regular', size, color: ctx.color });
    for (let i = 0; i < cols; i++) {
      doc.text(cells[i] ?? '', xs[i] + pad, y + pad, { width: widths[i] - 2 * pad, align: align(i) });
    }
    doc.save().lineWidth(0.5).strokeColor(COLOR.rule);
    doc.rect(ctx.left, y, ctx.width, h).stroke();
    for (let i = 1; i < cols; i++) doc.moveTo(xs[i], y).lineTo(xs[i], y + h).stroke();
    doc.restore();
  };

  const headerH = measure(header, true);
  let y = doc.y + 2;
  const firstRowH = rows.length ? measure(rows[0], false) : 0;
  if (y + headerH + firstRowH > CONTENT_BOTTOM) {
    doc.addPage();
    y = doc.y;
  }
  drawRow(header, true, y, headerH);
  y += headerH;
  for (const row of rows) {
    const h = measure(row, false);
    if (y + h > CONTENT_BOTTOM) {
      doc.addPage();
      y = doc.y;
      drawRow(header, true, y, headerH);
      y += headerH;
    }
    drawRow(row, false, y, h);
    y += h;
  }
  doc.x = ctx.left;
  doc.y = y + ctx.size * 0.8;
}

function renderBlocks(ctx: Ctx, tokens: Token[], opts: { tight?: boolean } = {}): void {
  const { doc } = ctx;
  const gap = opts.tight ? ctx.size * 0.15 : ctx.size * 0.6;
  for (const t of tokens) {
    switch (t.type) {
      case 'space':
        break;
      case 'heading':
        renderHeading(ctx, t as Tokens.Heading);
        break;
      case 'paragraph':
        writeRuns(ctx, inlineRuns((t as Tokens.Paragraph).tokens, plain()), ctx.left, ctx.width, ctx.size);
        doc.y += gap;
        break;
      case 'text': {
        const text = t as Tokens.Text;
        const runs = text.tokens?.length ? inlineRuns(text.tokens, plain()) : [{ ...plain(), text: decodeEntities(text.text) }];
        writeRuns(ctx, runs, ctx.left, ctx.width, ctx.size);
        doc.y += gap;
        break;
      }
      case 'list':
        renderList(ctx, t as Tokens.List);
        break;
      case 'table':
        renderTable(ctx, t as Tokens.Table);
        break;
      case 'hr': {
        ensureSpace(doc, ctx.size * 2);
        const y = doc.y + ctx.size * 0.6;
        hRule(doc, y, ctx.left, ctx.left + ctx.width, COLOR.rule, 0.8);
        doc.y = y + ctx.size * 0.9;
        break;
      }
      case 'blockquote':
        renderBlockquote(ctx, t as Tokens.Blockquote);
        break;
      case 'code':
        renderCode(ctx, t as Tokens.Code);
        break;
      case 'html':
      case 'def':
      default: {
        const raw = 'text' in t && typeof t.text === 'string' ? t.text : t.raw;
        if (raw.trim()) {
          writeRuns(ctx, [{ ...plain(), text: decodeEntities(raw.trim()) }], ctx.left, ctx.width, ctx.size);
          doc.y += gap;
        }
      }
    }
  }
}

/** Renders `markdown` starting at doc.y; pages are added as needed. */
export function renderMarkdown(doc: PDFKit.PDFDocument, markdown: string, opts: MarkdownOptions = {}): void {
  const tokens = marked.lexer(markdown, { gfm: true });
  const left = opts.left ?? CONTENT_LEFT;
  const ctx: Ctx = {
    doc,
    left,
    width: opts.width ?? CONTENT_RIGHT - left,
    size: opts.fontSize ?? 9.5,
    color: COLOR.text,
    italic: false,
  };
  renderBlocks(ctx, tokens);
}
