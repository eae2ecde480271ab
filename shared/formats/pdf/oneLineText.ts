/**
 * One-line texts drawn and measured without pdfkit's LineWrapper. pdfkit 0.20 runs every
 * `text()` and `heightOfString()` with a width through the wrapper: a Unicode line-break scan
 * (UAX #14, `linebreak`) of the whole string, a width per word, five events per line. Most of an
 * invoice's ~150 calls are labels, amounts, dates and names that fit their column on one line,
 * and that machinery was about a quarter of a PDF's render CPU (docs/benchmarks.md, "Rendering:
 * one-line texts").
 *
 * For such a text the wrapper's result is known without it: one line holding the whole string,
 * drawn by `_fragment` at the cursor, the cursor moved down one line. The shortcut takes only
 * texts where that is certain and leaves everything else to pdfkit:
 * - every character in `SIMPLE` and no pattern of `BREAK_TRAP`: in such text UAX #14 allows a
 *   break only after a space (test/formats/pdf/oneLineText.test.ts checks this with pdfkit's own
 *   line breaker over every string of up to four characters of the alphabet), so the wrapper's
 *   words are measured in the same space-separated pieces as the whole string (pdfkit's
 *   `layout` splits at spaces) and their widths add up to its width;
 * - the whole width at least 0.001 pt inside the line (pdfkit compares rounded word widths);
 * - options the shortcut reproduces (width, left or right alignment, lineGap, lineBreak), no
 *   continued text, no page break due before the line.
 * Same bytes as pdfkit's path: the test renders invoices both ways.
 */

/** Whether the shortcut is used. Only the equivalence test turns it off. */
export const oneLineText = { enabled: true };

/** Latin letters (Latin-1, Extended-A), digits, space and the punctuation of amounts, dates, numbers and addresses. */
const SIMPLE = /^[ 0-9A-Za-z\u00C0-\u017F.,:;)#&@*_='"\u00B7\u00A7<>\u20AC%+($\u00B0/-]+$/;
/** Where UAX #14 breaks inside such text: after . , : ; ) and these symbols before a currency, percent, plus or "(", and after - or / before anything but a digit or a space. */
const BREAK_TRAP = /[.,:;\u20AC%+$\u00B0)][\u20AC%+($\u00B0]|[-/][^0-9 ]/;

/** Text whose only break opportunities are after spaces (see the module comment). */
export function breaksOnlyAtSpaces(text: string): boolean {
  return SIMPLE.test(text) && !BREAK_TRAP.test(text);
}

/** The options the shortcut reproduces; any other key (after pdfkit's `_initOptions`) takes pdfkit's path. */
const KNOWN = new Set(['width', 'align', 'lineGap', 'lineBreak', 'continued', 'columns', 'columnGap', 'rotation']);

type Options = Record<string, unknown>;
type Internal = PDFKit.PDFDocument & {
  _initOptions(x?: unknown, y?: unknown, options?: Options): Options;
  _fragment(text: string, x: number, y: number, options: Options): void;
  _wrapper: unknown;
  _textOptions: unknown;
  _lineGap: number;
  page: PDFKit.PDFPage & { maxY(): number };
  currentLineHeight(includeGap?: boolean): number;
  widthOfString(text: string, options?: Options): number;
};

/** pdfkit's PDFNumber: the float32 at or below n (how the wrapper rounds widths and its page bottom). */
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
function pdfNumber(n: number): number {
  const rounded = Math.fround(n);
  if (rounded <= n) return rounded;
  f32[0] = n;
  if (n <= 0) u32[0] += 1;
  else u32[0] -= 1;
  return f32[0];
}

/**
 * The wrapper's line width and the text's width when `text` (after `_initOptions`) certainly fits
 * that line, else null. The line width is LineWrapper's, `(width · 100 / 100 − columnGap · 0) / 1`
 * for one column.
 */
function oneLine(doc: Internal, text: unknown, opts: Options): { lineWidth: number; textWidth: number } | null {
  if (typeof text !== 'string' || text.length === 0 || !breaksOnlyAtSpaces(text)) return null;
  for (const key in opts) if (!KNOWN.has(key)) return null;
  const width = opts.width as number;
  if (!width || opts.continued || opts.rotation !== 0 || (opts.columns as number) > 1) return null;
  if (opts.align !== undefined && opts.align !== 'left' && opts.align !== 'right') return null;
  const lineWidth = (width * 100) / 100;
  const textWidth = doc.widthOfString(text);
  return textWidth <= lineWidth - 0.001 ? { lineWidth, textWidth } : null;
}

/** Space-separated words, as the wrapper counts them in such text. */
function wordCount(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) if (text[i] !== ' ' && (i === 0 || text[i - 1] === ' ')) n++;
  return n;
}

/** Installs the shortcut on `text` and `heightOfString` of one document (after the font fallback, whose measuring and drawing it calls). */
export function installOneLineText(document: PDFKit.PDFDocument): void {
  if (!oneLineText.enabled) return;
  const doc = document as Internal;
  const origText = doc.text.bind(doc) as (...args: unknown[]) => PDFKit.PDFDocument;
  const origHeight = doc.heightOfString.bind(doc) as (text: string, options?: Options) => number;

  (doc as unknown as { text: (text: unknown, x?: unknown, y?: unknown, options?: Options) => PDFKit.PDFDocument }).text = (text, x, y, options) => {
    if (doc._wrapper == null && doc._textOptions == null) {
      // Sets doc.x / doc.y as pdfkit's text() does first; pdfkit's path repeats it with the same result.
      const opts = doc._initOptions(x, y, options);
      const line = oneLine(doc, text, opts);
      if (line) {
        const maxY = pdfNumber(doc.page.maxY());
        const lineHeight = doc.currentLineHeight(true);
        // The wrapper moves to a new page before the first line when the line would pass the bottom.
        if (!(doc.y > maxY || doc.y + lineHeight > maxY)) {
          const t = text as string;
          // What the wrapper hands its line callback: textWidth and wordCount matter only for
          // centred, justified, underlined or linked text, none of which is taken here.
          opts.textWidth = pdfNumber(line.textWidth);
          opts.wordCount = wordCount(t);
          opts.lineWidth = line.lineWidth;
          doc._fragment(t, doc.x, doc.y, opts);
          doc.y += lineHeight + ((opts.lineGap as number) || doc._lineGap || 0);
          return doc;
        }
      }
    }
    return origText(text, x, y, options);
  };

  doc.heightOfString = (text: string, options?: Options) => {
    if (doc._wrapper == null && doc._textOptions == null) {
      const opts = doc._initOptions(options);
      if (oneLine(doc, text, opts) !== null) {
        // pdfkit adds the line to doc.y and returns the difference: the same float arithmetic.
        const y = doc.y;
        return y + (doc.currentLineHeight(true) + ((opts.lineGap as number) || doc._lineGap || 0)) - y;
      }
    }
    return origHeight(text, options);
  };
}
