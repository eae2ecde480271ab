/**
 * Renders Markdown into an open pdfkit document from `marked`'s lexer tokens. Raw HTML is printed
 * as text and images as their alt text (the PDF must not fetch anything). User text passes
 * `breakLongRuns` first and nesting stops at MAX_NESTING, so no input can make the text column
 * vanish or the wrapping go quadratic.
 */
import { marked, type Token, type Tokens } from 'marked';
import { FONT, type FontStyle } from './fonts';
import { COLOR, CONTENT_BOTTOM, CONTENT_LEFT, CONTENT_RIGHT, ensureSpace, hRule, setStyle } from './layout';
import { ZWSP, breakLongRuns, splitToFit } from './textBreaks';

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
  /** Lists and quotes around this block. */
  depth: number;
  /** Set once indentation has stopped: the column deeper lists and quotes stay in. */
  limit?: { left: number; width: number };
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
const QUOTE_INDENT = 12;
/** Lists and quotes indent up to this depth, and never below MIN_TEXT_WIDTH; deeper ones stay in
 * the column reached (each level took 12–18 pt: 60 levels left no room for a letter). */
const MAX_NESTING = 8;
const MIN_TEXT_WIDTH = 120;
/** Table columns are never narrower than this (unless the columns cannot all have it). */
const MIN_COLUMN_WIDTH = 30;
/** Link targets longer than this are shortened in the middle. */
const MAX_TARGET_LENGTH = 100;

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

/** A data: URI's decoded size, e.g. "45 kB". */
function dataSize(uri: string): string {
  const comma = uri.indexOf(',');
  const meta = comma < 0 ? uri : uri.slice(0, comma);
  const payload = comma < 0 ? 0 : uri.length - comma - 1;
  const bytes = /;base64$/i.test(meta) ? Math.floor((payload * 3) / 4) : payload;
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${Math.round(bytes / 1000)} kB`;
  return `${(bytes / 1_000_000).toFixed(1).replace('.', ',')} MB`;
}

/**
 * How a link target or image source is printed. A data: URI (a pasted screenshot) is unreadable
 * on paper and would fill pages: it is named by its size. Other long addresses keep their start
 * (scheme, host, path) and end.
 */
function describeTarget(href: string): string {
  if (/^data:/i.test(href)) return `eingebettete Daten, ${dataSize(href)}`;
  if (href.length <= MAX_TARGET_LENGTH) return href;
  return `${href.slice(0, MAX_TARGET_LENGTH - 25)}…${href.slice(-20)}`;
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
        if (link.href && link.href !== label && !link.href.startsWith(`mailto:${label}`)) {
          out.push({ ...style, text: ` (${describeTarget(link.href)})` });
        }
        break;
      }
      case 'image':
        out.push({ ...style, italic: true, text: `[Bild: ${(t as Tokens.Image).text || describeTarget((t as Tokens.Image).href)}]` });
        break;
      case 'text': {
        const text = t as Tokens.Text;
        if (text.tokens?.length) inlineRuns(text.tokens, style, out);
        else out.push({ ...style, text: decodeEntities(text.text) });
        break;
      }
      default:
        out.push({ ...style, text: decodeEntities('text' in t && typeof t.text === 'string' ? t.text : t.raw) });
    }
  }
  return out;
}

/** Soft line breaks inside a paragraph are spaces in Markdown. */
function normaliseRuns(runs: Run[]): Run[] {
  return runs.map((r) => (r.text === '\n' ? r : { ...r, text: r.text.replace(/\s*\n\s*/g, ' ') })).filter((r) => r.text.length > 0);
}

function plainText(tokens: Token[] | undefined): string {
  return inlineRuns(tokens, { bold: false, italic: false, code: false, strike: false })
    .map((r) => r.text)
    .join('');
}

/**
 * Breaks long runs (textBreaks.ts). DejaVu Sans Mono has no zero-width space, so in inline code
 * the break is a run of its own, set in the text font; pdfkit may wrap between runs.
 */
function breakRun(run: Run): Run[] {
  const text = breakLongRuns(run.text);
  if (!run.code || !text.includes(ZWSP)) return [{ ...run, text }];
  return text
    .split(ZWSP)
    .flatMap((part, i) =>
      i === 0
        ? [{ ...run, text: part }]
        : [
            { ...run, code: false, text: ZWSP },
            { ...run, text: part },
          ],
    )
    .filter((r) => r.text.length > 0);
}

/** Writes runs as one wrapped paragraph at (x, doc.y). */
function writeRuns(ctx: Ctx, runs: Run[], x: number, width: number, size: number, extra: { bold?: boolean } = {}): void {
  const { doc } = ctx;
  const list = normaliseRuns(runs).flatMap(breakRun);
  if (list.length === 0) return;
  setStyle(doc, { size, color: ctx.color });
  ensureSpace(doc, doc.currentLineHeight(true) + 2);
  list.forEach((run, i) => {
    const font = fontFor({ bold: run.bold || !!extra.bold, italic: run.italic || ctx.italic, code: run.code });
    doc
      .font(FONT[font])
      .fontSize(run.code ? size * 0.92 : size)
      .fillColor(ctx.color);
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

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const max = (values: number[]) => values.reduce((a, b) => Math.max(a, b), 0);

function renderTable(ctx: Ctx, table: Tokens.Table): void {
  const { doc } = ctx;
  const size = ctx.size * 0.9;
  const pad = 4;
  const cols = table.header.length;
  const cellText = (cell: Tokens.TableCell | undefined) => breakLongRuns(plainText(cell?.tokens));
  const header = table.header.map(cellText);
  const rows = table.rows.map((r) => header.map((_, i) => cellText(r[i])));

  // Column widths follow the content: each column gets its longest word as a minimum (at least
  // MIN_COLUMN_WIDTH, so long-word neighbours cannot squeeze a column to nothing) and shares the
  // rest in proportion to its text length.
  // [longest word, whole text] per cell, the header in its bold face.
  const natural = (cells: string[], bold: boolean) => {
    setStyle(doc, { font: bold ? 'bold' : 'regular', size });
    return cells.map((c) => [max(c.split(/[\s\u200b]+/).map((w) => doc.widthOfString(w))), doc.widthOfString(c)]);
  };
  const measured = [natural(header, true), ...rows.map((r) => natural(r, false))];
  const floor = Math.min(MIN_COLUMN_WIDTH, ctx.width / cols);
  const minW = header.map((_, i) => Math.max(floor, max(measured.map((m) => m[i][0])) + 2 * pad));
  const wantW = header.map((_, i) => Math.max(minW[i], max(measured.map((m) => m[i][1])) + 2 * pad));
  const totalWant = sum(wantW);
  const totalMin = sum(minW);
  let widths: number[];
  if (totalWant <= ctx.width) {
    // Stretch to the full width so tables line up with the text column.
    widths = wantW.map((w) => (w * ctx.width) / totalWant);
  } else if (totalMin <= ctx.width) {
    const extra = wantW.map((w, i) => w - minW[i]);
    const extraSum = sum(extra) || 1;
    widths = minW.map((m, i) => m + ((ctx.width - totalMin) * extra[i]) / extraSum);
  } else {
    // Not even the minimums fit (long words, already cut to MAX_RUN characters): columns whose
    // minimum is within a fair share keep it, the others share what is left equally.
    widths = [...minW];
    let open = minW.map((_, i) => i);
    let rest = ctx.width;
    for (;;) {
      const fair = rest / open.length;
      const narrow = open.filter((i) => minW[i] <= fair);
      if (narrow.length === 0 || narrow.length === open.length) break;
      rest -= sum(narrow.map((i) => minW[i]));
      open = open.filter((i) => minW[i] > fair);
    }
    for (const i of open) widths[i] = rest / open.length;
  }
  const xs = widths.map((_, i) => ctx.left + sum(widths.slice(0, i)));
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
    for (let i = 1; i < cols; i++)
      doc
        .moveTo(xs[i], y)
        .lineTo(xs[i], y + h)
        .stroke();
    doc.restore();
  };

  // Rows are placed like the invoice's item rows (itemTable.ts): a row that fits on a fresh page
  // moves there whole, a row taller than a page is split between lines of its cells, and every
  // page repeats the header row. A header taller than a third of a page is not repeated (it would
  // leave the rows little room); it is then split like a row.
  const headerH = measure(header, true);
  const capacity = CONTENT_BOTTOM - doc.page.margins.top;
  const repeatHeader = headerH <= capacity / 3;
  const rowRoom = capacity - (repeatHeader ? headerH : 0);
  let y = doc.y + 2;
  // True while nothing but the repeated header is on the current page.
  let fresh = false;
  let rowsOnPage = 0;
  const newPage = () => {
    doc.addPage();
    y = doc.y;
    fresh = true;
    rowsOnPage = 0;
    if (repeatHeader) {
      drawRow(header, true, y, headerH);
      y += headerH;
    }
  };
  // Keep the header with the first row, or with the first lines of a row taller than a page.
  const firstPart = (h: number, room: number) => (h <= room ? h : Math.min(h, 60));
  const firstRowH = rows.length ? measure(rows[0], false) : 0;
  const keep = repeatHeader ? headerH + firstPart(firstRowH, rowRoom) : firstPart(headerH, capacity);
  if (y + keep > CONTENT_BOTTOM) {
    doc.addPage();
    y = doc.y;
    fresh = true;
  }

  const lines = [{ cells: header, bold: true }, ...rows.map((cells) => ({ cells, bold: false }))];
  for (const { cells, bold } of lines) {
    let pending: string[] | null = cells;
    while (pending) {
      const h = measure(pending, bold);
      if (y + h <= CONTENT_BOTTOM) {
        drawRow(pending, bold, y, h);
        y += h;
        if (!bold) rowsOnPage++;
        fresh = false;
        pending = null;
        continue;
      }
      if (rowsOnPage > 0 && h <= rowRoom) {
        newPage();
        continue;
      }
      setStyle(doc, { font: bold ? 'bold' : 'regular', size });
      let parts: Array<[string, string]> = pending.map((c, i) => splitToFit(doc, c, widths[i] - 2 * pad, CONTENT_BOTTOM - y - 2 * pad));
      if (!parts.some(([head, rest]) => head && rest)) {
        if (!fresh) {
          newPage();
          continue;
        }
        // Not even one line fits on an empty page (cannot happen with sane sizes): print the
        // first word of each cell anyway so the loop always advances.
        parts = pending.map((c): [string, string] => {
          const [word, ...others] = c.split(/(?<=[\s\u200b])/);
          return [word.trimEnd(), others.join('').trimStart()];
        });
      }
      const heads = parts.map(([head]) => head);
      const partH = measure(heads, bold);
      drawRow(heads, bold, y, partH);
      y += partH;
      fresh = false;
      const rests = parts.map(([, rest]) => rest);
      pending = rests.some(Boolean) ? rests : null;
      if (pending) newPage();
      else if (!bold) rowsOnPage++;
    }
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
