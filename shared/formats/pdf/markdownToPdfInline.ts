/**
 * Markdown inline tokens (marked) turned into styled text runs, and a paragraph of runs written
 * into the text column. The block layout (markdownToPdf.ts) and tables (markdownToPdfTable.ts) use it.
 */
import type { Token, Tokens } from 'marked';
import { FONT, type FontStyle } from './fonts';
import { ensureSpace, setStyle } from './layout';
import { ZWSP, breakLongRuns } from './textBreaks';

/** The column and inherited style a block is rendered in. */
export interface Ctx {
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

export interface Run {
  text: string;
  bold: boolean;
  italic: boolean;
  code: boolean;
  strike: boolean;
}

/** Link targets longer than this are shortened in the middle. */
const MAX_TARGET_LENGTH = 100;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', '#39': "'" };

/** marked leaves HTML entities as written ("&amp;"); a PDF shows characters. */
export function decodeEntities(text: string): string {
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
export function inlineRuns(tokens: Token[] | undefined, style: Omit<Run, 'text'>, out: Run[] = []): Run[] {
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

export function plainText(tokens: Token[] | undefined): string {
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
export function writeRuns(ctx: Ctx, runs: Run[], x: number, width: number, size: number, extra: { bold?: boolean } = {}): void {
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

export function plain(): Omit<Run, 'text'> {
  return { bold: false, italic: false, code: false, strike: false };
}
