/**
 * Where user text may break: inside long unbroken runs and between pages (rows taller than a
 * page). pdfkit 0.20 wraps a word wider than the line in quadratic time and memory, so a break
 * opportunity every few dozen characters keeps every word shorter than a line
 * (docs/pdf-and-zugferd.md, "Layout rules").
 */

/** Zero-width space: a line-break opportunity (UAX #14 class ZW). DejaVu Sans (all four faces)
 * maps it to a glyph without ink and without advance, and pdftotext extracts nothing for it.
 * DejaVu Sans Mono has no such glyph (it would draw .notdef): monospaced text needs another
 * separator, see `breakLongRuns`' `separator`. */
export const ZWSP = '\u200b';

/** Longest run of characters without a break opportunity handed to pdfkit. */
export const MAX_RUN = 40;

// Characters pdfkit breaks at that are also spaces; anything else (including the no-break space)
// counts as part of a run.
const RUN = /[^ \t\n\r\f\v\u200b]+/g;
// A break is never placed before a combining mark or a joiner (it would tear a character apart).
// biome-ignore lint/suspicious/noMisleadingCharacterClass: each joiner is listed as a code point of its own on purpose
const JOINS_PREVIOUS = /^[\p{M}\u200c\u200d\ufe0f]/u;

/**
 * Inserts `separator` into every run of more than `maxRun` characters (code points) without a
 * space, so no run is longer than `maxRun`. Text without such runs is returned unchanged.
 */
export function breakLongRuns(text: string, maxRun: number = MAX_RUN, separator: string = ZWSP): string {
  const limit = Math.max(1, Math.floor(maxRun));
  return text.replace(RUN, (run) => {
    if (run.length <= limit) return run;
    const chars = Array.from(run);
    if (chars.length <= limit) return run;
    const parts: string[] = [];
    let start = 0;
    while (start < chars.length) {
      let end = Math.min(start + limit, chars.length);
      while (end < chars.length && JOINS_PREVIOUS.test(chars[end])) end++;
      parts.push(chars.slice(start, end).join(''));
      start = end;
    }
    return parts.join(separator);
  });
}

/**
 * Longest prefix of `text` (whole words, breaking at spaces and at `ZWSP`) whose height at
 * `width`, in the document's current font and size, is at most `maxHeight`; returns it and the
 * remainder. Used to split a table cell taller than a page. The prefix is searched from the
 * start (doubling, then bisecting), so the cost follows the part that fits, not the whole text.
 */
export function splitToFit(doc: PDFKit.PDFDocument, text: string, width: number, maxHeight: number): [string, string] {
  const words = text.split(/(?<=[\s\u200b])/);
  const fits = (n: number) => doc.heightOfString(words.slice(0, n).join('').trimEnd() || ' ', { width }) <= maxHeight;
  // Invariant: `lo` words fit, `hi + 1` words do not (or do not exist).
  let lo = 0;
  let step = 1;
  while (lo + step <= words.length && fits(lo + step)) {
    lo += step;
    step *= 2;
  }
  let hi = Math.min(words.length, lo + step - 1);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return [words.slice(0, lo).join('').trimEnd(), words.slice(lo).join('').trimStart()];
}
