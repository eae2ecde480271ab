/**
 * Renders Markdown into an open pdfkit document from `marked`'s lexer tokens. Raw HTML is printed
 * as text and images as their alt text (the PDF must not fetch anything). User text passes
 * `breakLongRuns` first and nesting stops at MAX_NESTING, so no input can make the text column
 * vanish or the wrapping go quadratic.
 */
import { marked, type Token, type Tokens } from 'marked';
import { COLOR, CONTENT_LEFT, CONTENT_RIGHT, ensureSpace, hRule, setStyle } from './layout';
import { type Ctx, decodeEntities, inlineRuns, plain, writeRuns } from './markdownToPdfInline';
import { renderTable } from './markdownToPdfTable';
import { breakLongRuns } from './textBreaks';

export interface MarkdownOptions {
  /** Left edge and width of the text column; defaults to the page's content area. */
  left?: number;
  width?: number;
  /** Body font size; headings scale from it. */
  fontSize?: number;
}

const HEADING_SCALE: Record<number, number> = { 1: 1.75, 2: 1.4, 3: 1.18 };
const LIST_INDENT = 16;
const QUOTE_INDENT = 12;
/** Lists and quotes indent up to this depth, and never below MIN_TEXT_WIDTH; deeper ones stay in
 * the column reached (each level took 12–18 pt: 60 levels left no room for a letter). */
const MAX_NESTING = 8;
const MIN_TEXT_WIDTH = 120;

function renderHeading(ctx: Ctx, t: Tokens.Heading): void {
  const size = ctx.size * (HEADING_SCALE[t.depth] ?? 1.05);
  // Keep a heading together with at least two lines of what follows.
  ensureSpace(ctx.doc, size * 1.4 + ctx.size * 3);
  ctx.doc.y += t.depth <= 2 ? size * 0.5 : size * 0.3;
  writeRuns(ctx, inlineRuns(t.tokens, plain()), ctx.left, ctx.width, size, { bold: true });
  if (t.depth === 1) hRule(ctx.doc, ctx.doc.y + 1, ctx.left, ctx.left + ctx.width, COLOR.faint);
  ctx.doc.y += size * 0.35;
}

/** True when a block indented by `by` would pass the nesting limit. */
function atLimit(ctx: Ctx, by: number): boolean {
  return ctx.limit !== undefined || ctx.depth >= MAX_NESTING || ctx.width - by < MIN_TEXT_WIDTH;
}

function renderList(ctx: Ctx, list: Tokens.List): void {
  const start = typeof list.start === 'number' ? list.start : 1;
  const indent = LIST_INDENT + (list.ordered ? 2 : 0);
  // Past the limit the markers stay in the column where indentation stopped, the text beside them.
  const limit = atLimit(ctx, indent) ? (ctx.limit ?? { left: ctx.left, width: ctx.width }) : undefined;
  const left = limit?.left ?? ctx.left;
  const width = limit?.width ?? ctx.width;
  const inner: Ctx = { ...ctx, left: left + indent, width: width - indent, depth: ctx.depth + 1, limit };
  list.items.forEach((item, index) => {
    const marker = list.ordered ? `${start + index}.` : item.task ? (item.checked ? '☑' : '☐') : '•';
    const { doc } = ctx;
    setStyle(doc, { size: ctx.size, color: ctx.color });
    ensureSpace(doc, doc.currentLineHeight(true) + 2);
    const markerY = doc.y;
    doc.text(marker, left, markerY, { width: LIST_INDENT - 3, align: list.ordered ? 'right' : 'left', lineBreak: false });
    doc.y = markerY;
    renderBlocks(
      inner,
      item.tokens.filter((tok) => tok.type !== 'checkbox'),
      { tight: !list.loose },
    );
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
  // DejaVu Sans Mono has no zero-width space: a run longer than a line is cut into line-long
  // pieces (monospaced, so the count is exact) and pdfkit never has to split a word itself.
  const perLine = Math.floor((ctx.width - 13) / doc.widthOfString('0'));
  doc.y += 2;
  for (const raw of lines) {
    const line = breakLongRuns(raw, perLine, '\n');
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
  const quoted = { ...ctx, color: COLOR.muted, italic: true, depth: ctx.depth + 1 };
  if (atLimit(ctx, QUOTE_INDENT)) {
    // Past the nesting limit a quote is set in the same column, without a bar of its own (it would
    // cross the text); the bars of the enclosing quotes still mark it.
    renderBlocks({ ...quoted, limit: ctx.limit ?? { left: ctx.left, width: ctx.width } }, quote.tokens);
    doc.x = ctx.left;
    return;
  }
  renderBlocks({ ...quoted, left: ctx.left + QUOTE_INDENT, width: ctx.width - QUOTE_INDENT }, quote.tokens);
  // The bar marks the quote on the page where it ends (from the top margin if it crossed pages).
  const barTop = pageIndex(doc) === startPage ? top : doc.page.margins.top;
  doc
    .save()
    .lineWidth(2.5)
    .strokeColor(COLOR.faint)
    .moveTo(ctx.left + 3, barTop)
    .lineTo(ctx.left + 3, doc.y - 4)
    .stroke()
    .restore();
  doc.x = ctx.left;
}

function pageIndex(doc: PDFKit.PDFDocument): number {
  const range = doc.bufferedPageRange();
  return range.start + range.count - 1;
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
    depth: 0,
  };
  renderBlocks(ctx, tokens);
}
