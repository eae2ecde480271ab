/**
 * DejaVu Sans, embedded as TrueType subsets. The 14 standard PDF fonts are never used: they are
 * not embedded (PDF/A forbids that) and their WinAnsi encoding has no reliable "€" and no
 * characters beyond Latin-1 that customer names may contain. Characters DejaVu lacks (Chinese,
 * Japanese, Korean) are drawn in Noto Sans SC / KR, also subset-embedded (`installFontFallback`).
 *
 * The fonts are parsed once per process and the fontkit objects handed to every document:
 * parsing a TTF's tables (cmap, GSUB, GPOS, hmtx) per document was most of a PDF's CPU
 * (docs/benchmarks.md, "Rendering CPU"). pdfkit 0.20 accepts a fontkit font in registerFont;
 * the per-document state (subset, widths, ToUnicode) stays in pdfkit's EmbeddedFont.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import * as fontkit from 'fontkit';

const require = createRequire(import.meta.url);
const TTF_DIR = path.join(path.dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf');
const notoDir = (pkg: string) => path.dirname(require.resolve(`@expo-google-fonts/${pkg}`));

const FILES = {
  regular: path.join(TTF_DIR, 'DejaVuSans.ttf'),
  bold: path.join(TTF_DIR, 'DejaVuSans-Bold.ttf'),
  italic: path.join(TTF_DIR, 'DejaVuSans-Oblique.ttf'),
  boldItalic: path.join(TTF_DIR, 'DejaVuSans-BoldOblique.ttf'),
  mono: path.join(TTF_DIR, 'DejaVuSansMono.ttf'),
} as const;

/** Fallbacks in the order they are tried: SC has the Han characters of Chinese and Japanese and the kana, KR the Hangul. */
const FALLBACK_FILES = {
  scRegular: path.join(notoDir('noto-sans-sc'), '400Regular', 'NotoSansSC_400Regular.ttf'),
  scBold: path.join(notoDir('noto-sans-sc'), '700Bold', 'NotoSansSC_700Bold.ttf'),
  krRegular: path.join(notoDir('noto-sans-kr'), '400Regular', 'NotoSansKR_400Regular.ttf'),
  krBold: path.join(notoDir('noto-sans-kr'), '700Bold', 'NotoSansKR_700Bold.ttf'),
} as const;
type FallbackFace = keyof typeof FALLBACK_FILES;

export type FontStyle = keyof typeof FILES;

/** Names under which the fonts are registered on every document. */
export const FONT: Record<FontStyle, string> = {
  regular: 'DejaVuSans',
  bold: 'DejaVuSans-Bold',
  italic: 'DejaVuSans-Oblique',
  boldItalic: 'DejaVuSans-BoldOblique',
  mono: 'DejaVuSansMono',
};

const FALLBACK_NAME: Record<FallbackFace, string> = {
  scRegular: 'NotoSansSC-Regular',
  scBold: 'NotoSansSC-Bold',
  krRegular: 'NotoSansKR-Regular',
  krBold: 'NotoSansKR-Bold',
};

/** The fallback faces for a primary font: bold text falls back to the bold Noto faces (no oblique CJK exists). */
function fallbacksFor(primaryName: string): FallbackFace[] {
  return /Bold/.test(primaryName) ? ['scBold', 'krBold'] : ['scRegular', 'krRegular'];
}

/** What a font object needs to offer here (fontkit's Font; it has no type declarations of its own). */
export interface FontkitFont {
  postscriptName: string;
  hasGlyphForCodePoint(codePoint: number): boolean;
  layout(text: string): unknown;
}

/**
 * Whether fonts are shared across documents. Only the equivalence test turns it off, to compare
 * against what pdfkit produces when it parses the font files for every document.
 */
export const fontSharing = { enabled: true };

const parsed = new Map<string, FontkitFont>();

/** The font at `file`, parsed once per process on first use (the CJK files, 10 MB each, only when a document needs them). */
function parsedFont(file: string): FontkitFont {
  let font = parsed.get(file);
  if (!font) {
    font = fontkit.create(readFileSync(file)) as FontkitFont;
    reuseGlyphData(font as unknown as SubsettableFont);
    parsed.set(file, font);
    pathByFont.set(font, file);
  }
  return font;
}

/** The parts of fontkit's TrueType font and its subset (TTFSubset) that `reuseGlyphData` touches. */
interface SubsettableFont {
  _variationProcessor?: unknown;
  loca?: { offsets: number[]; version: number };
  _getTableStream(tag: string): { pos: number; readBuffer(n: number): Uint8Array };
  getGlyph(gid: number): {
    advanceWidth: number;
    _getMetrics(): { leftBearing: number };
    _decode(): { numberOfContours: number; components?: Array<{ glyphID: number; pos: number }> } | null;
  };
  createSubset(): TtfSubset;
}
interface TtfSubset {
  _addGlyph?: (gid: number) => number;
  encode(): Uint8Array;
  includeGlyph(gid: number): number;
  glyphs: number[];
  glyf: Uint8Array[];
  loca: { offsets: number[]; version: number };
  hmtx: { metrics: Array<{ advance: number; bearing: number }> };
  offset: number;
}
/** What a glyph contributes to a subset, read once per process: its glyf bytes, its components (compound glyphs), its metrics. */
interface GlyphData {
  bytes: Uint8Array;
  components: Array<{ glyphID: number; pos: number }> | null;
  advance: number;
  bearing: number;
}

/**
 * fontkit's TrueType subsetter decodes every used glyph's whole outline (points, flags) for
 * every document, only to learn whether it is a compound glyph and which glyphs it refers to,
 * then copies its bytes from the glyf table: about a fifth of a PDF's CPU. That depends on the
 * font and the glyph id alone, so it is read once per process and the subset is built from it
 * exactly as fontkit's `_addGlyph` builds it. Writing the subset file, fontkit then encoded
 * every table field by field (the hinting programs byte by byte) for every document; the tables
 * that do not depend on the glyphs (head, cvt, prep, fpgm) are taken from a subset fontkit wrote
 * once, and the rest written in fontkit's layout (`encodeSubset`). Same bytes as fontkit's:
 * test/formats/pdf/fontFallback.test.ts compares with pdfkit parsing the files per document.
 * Fonts with variations keep fontkit's path.
 */
function reuseGlyphData(font: SubsettableFont): void {
  const data = new Map<number, GlyphData>();
  const glyphData = (gid: number): GlyphData => {
    let d = data.get(gid);
    if (!d) {
      const loca = font.loca as { offsets: number[] };
      const glyph = font.getGlyph(gid);
      const glyf = glyph._decode();
      const stream = font._getTableStream('glyf');
      stream.pos += loca.offsets[gid];
      const bytes = stream.readBuffer(loca.offsets[gid + 1] - loca.offsets[gid]);
      const components = glyf && glyf.numberOfContours < 0 ? (glyf.components ?? []).map((c) => ({ glyphID: c.glyphID, pos: c.pos })) : null;
      d = { bytes, components, advance: glyph.advanceWidth, bearing: glyph._getMetrics().leftBearing };
      data.set(gid, d);
    }
    return d;
  };
  const createSubset = font.createSubset.bind(font);
  let template: Array<{ tag: string; bytes: Uint8Array }> | null = null;
  font.createSubset = () => {
    const subset = createSubset();
    // Not a TrueType subset (CFF), or outlines that depend on variation settings: fontkit's own path.
    if (typeof subset._addGlyph !== 'function' || !font.loca || font._variationProcessor) return subset;
    // The tables of a subset fontkit writes itself (of .notdef alone), in its order: the static
    // ones are used as they are, the others give their layout.
    template ??= readTables(createSubset().encode());
    const tables = template;
    subset.encode = function (this: TtfSubset) {
      return encodeSubset(this, (font.loca as { version: number }).version, tables);
    };
    subset._addGlyph = function (this: TtfSubset, gid: number) {
      const d = glyphData(gid);
      let buffer = d.bytes;
      if (d.components) {
        // A compound glyph names its components by glyph id: renumbered for this subset, in a copy.
        buffer = new Uint8Array(buffer);
        const view = new DataView(buffer.buffer);
        for (const c of d.components) view.setUint16(c.pos, this.includeGlyph(c.glyphID));
      }
      this.glyf.push(buffer);
      this.loca.offsets.push(this.offset);
      this.hmtx.metrics.push({ advance: d.advance, bearing: d.bearing });
      this.offset += buffer.length;
      return this.glyf.length - 1;
    };
    return subset;
  };
}

/** The tables of a TrueType file as fontkit writes it: tag 'true', a 16-byte record per table, the tables after the records. */
function readTables(file: Uint8Array): Array<{ tag: string; bytes: Uint8Array }> {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const out: Array<{ tag: string; bytes: Uint8Array }> = [];
  for (let i = 0; i < view.getUint16(4); i++) {
    const at = 12 + 16 * i;
    const tag = String.fromCharCode(file[at], file[at + 1], file[at + 2], file[at + 3]);
    const offset = view.getUint32(at + 8);
    out.push({ tag, bytes: file.slice(offset, offset + view.getUint32(at + 12)) });
  }
  return out;
}

/**
 * fontkit's TTFSubset.encode() with the glyph-independent tables copied: the glyphs are added as
 * fontkit adds them, then the file is laid out as fontkit's Directory writes it (tables in the
 * template's order, unpadded, checksums 0; hhea's numberOfMetrics and maxp's numGlyphs set; loca
 * in the font's format; hmtx one advance/bearing pair per glyph).
 */
function encodeSubset(subset: TtfSubset, locaVersion: number, template: Array<{ tag: string; bytes: Uint8Array }>): Uint8Array {
  subset.glyf = [];
  subset.offset = 0;
  subset.loca = { offsets: [], version: locaVersion };
  subset.hmtx = { metrics: [], bearings: [] } as TtfSubset['hmtx'];
  for (let i = 0; i < subset.glyphs.length; i++) (subset._addGlyph as (gid: number) => number).call(subset, subset.glyphs[i]);
  subset.loca.offsets.push(subset.offset);
  const { offsets, version } = subset.loca;
  const metrics = subset.hmtx.metrics;

  const tables = template.map(({ tag, bytes }) => {
    switch (tag) {
      case 'hhea': {
        const b = bytes.slice();
        new DataView(b.buffer).setUint16(34, metrics.length);
        return b;
      }
      case 'maxp': {
        const b = bytes.slice();
        new DataView(b.buffer).setUint16(4, subset.glyf.length);
        return b;
      }
      case 'loca': {
        // Format 0 stores offset / 2 in 16 bits, format 1 the offset in 32.
        const b = new Uint8Array(offsets.length * (version === 0 ? 2 : 4));
        const v = new DataView(b.buffer);
        for (let i = 0; i < offsets.length; i++) {
          if (version === 0) v.setUint16(2 * i, offsets[i] >>> 1);
          else v.setUint32(4 * i, offsets[i]);
        }
        return b;
      }
      case 'glyf': {
        const b = new Uint8Array(subset.offset);
        let at = 0;
        for (const g of subset.glyf) {
          b.set(g, at);
          at += g.length;
        }
        return b;
      }
      case 'hmtx': {
        const b = new Uint8Array(metrics.length * 4);
        const v = new DataView(b.buffer);
        metrics.forEach((m, i) => {
          v.setUint16(4 * i, m.advance);
          v.setInt16(4 * i + 2, m.bearing);
        });
        return b;
      }
      default:
        return bytes;
    }
  });

  const n = tables.length;
  const headerSize = 12 + 16 * n;
  const out = new Uint8Array(headerSize + tables.reduce((sum, t) => sum + t.length, 0));
  const view = new DataView(out.buffer);
  const pow2 = 2 ** Math.floor(Math.log2(n));
  out.set([0x74, 0x72, 0x75, 0x65]); // 'true'
  view.setUint16(4, n);
  view.setUint16(6, pow2 * 16);
  view.setUint16(8, Math.log2(pow2));
  view.setUint16(10, n * 16 - pow2 * 16);
  let offset = headerSize;
  template.forEach(({ tag }, i) => {
    const at = 12 + 16 * i;
    for (let c = 0; c < 4; c++) out[at + c] = tag.charCodeAt(c);
    view.setUint32(at + 4, 0);
    view.setUint32(at + 8, offset);
    view.setUint32(at + 12, tables[i].length);
    out.set(tables[i], offset);
    offset += tables[i].length;
  });
  return out;
}

/** What pdfkit is given: the shared font object, or (sharing off) the file's bytes, which pdfkit parses per document. */
function fontAt(file: string): FontkitFont | Buffer {
  return fontSharing.enabled ? parsedFont(file) : readFileSync(file);
}

/** The regular face, for pdfkit's constructor: it instantiates a default font, and with it Helvetica never is. */
export function defaultFont(): string {
  return fontAt(FILES.regular) as unknown as string;
}

export function registerFonts(doc: PDFKit.PDFDocument): void {
  for (const style of Object.keys(FILES) as FontStyle[]) doc.registerFont(FONT[style], fontAt(FILES[style]) as unknown as string);
}

/**
 * pdfkit caches the shaped run of every word (fontkit layout: cmap, GSUB, GPOS) in its
 * per-document EmbeddedFont, so every document shaped "Rechnung", "Summe" and every amount
 * again: about half of a PDF's CPU once the fonts were shared. A run depends only on the font
 * and the text (pdfkit scales positions by the font's fixed units per em and never mutates a
 * cached run), so the cache is kept per font for the process. Bounded: emptied when it passes
 * LAYOUT_CACHE_MAX words (checked every 16 documents), so free text cannot grow it without end
 * (a cached word is a few hundred bytes to ~1 kB of glyph and position objects).
 */
const LAYOUT_CACHE_MAX = 10_000;
const layoutCaches = new Map<FontkitFont, Record<string, unknown>>();
let documentsSinceCheck = 0;

function sharedLayoutCache(font: FontkitFont): Record<string, unknown> {
  let cache = layoutCaches.get(font);
  if (!cache) {
    cache = Object.create(null) as Record<string, unknown>;
    layoutCaches.set(font, cache);
  }
  return cache;
}

/** Adjusts each pdfkit EmbeddedFont of the document as it is instantiated: the shared layout cache, the .notdef width. */
function adoptEmbeddedFonts(document: PDFKit.PDFDocument): void {
  if (fontSharing.enabled && ++documentsSinceCheck >= 16) {
    documentsSinceCheck = 0;
    for (const [font, cache] of layoutCaches) if (Object.keys(cache).length > LAYOUT_CACHE_MAX) layoutCaches.delete(font);
  }
  type Embedded = {
    font?: FontkitFont & { getGlyph(id: number): { advanceWidth: number } };
    layoutCache?: Record<string, unknown>;
    widths?: number[];
    scale?: number;
  };
  const doc = document as PDFKit.PDFDocument & { _font: Embedded | null };
  const adopt = () => {
    const f = doc._font;
    if (!f?.font) return;
    // pdfkit 0.20 puts the .notdef width into /W in font units (1229 for DejaVu's 2048 units per
    // em) where every other width is per 1000 (600): a character no font has was laid out 600
    // wide and drawn twice as wide over its neighbours. Scaled like the others.
    if (f.widths && f.scale) f.widths[0] = f.font.getGlyph(0).advanceWidth * f.scale;
    if (fontSharing.enabled && f.layoutCache && pathByFont.has(f.font)) f.layoutCache = sharedLayoutCache(f.font);
  };
  adopt(); // the default font, instantiated by the constructor
  const origFont = doc.font.bind(doc) as (...args: unknown[]) => PDFKit.PDFDocument;
  (doc as unknown as { font: (...args: unknown[]) => PDFKit.PDFDocument }).font = (...args: unknown[]) => {
    const r = origFont(...args);
    adopt();
    return r;
  };
}

/** The fonts parsed here (only their runs are cached for the process). */
const pathByFont = new Map<FontkitFont, string>();

/** Per-process memo of "does this font have a glyph for this code point", keyed by font then code point. */
const coverage = new Map<string, Map<number, boolean>>();
function covers(name: string, font: FontkitFont, cp: number): boolean {
  let m = coverage.get(name);
  if (!m) {
    m = new Map();
    coverage.set(name, m);
  }
  let has = m.get(cp);
  if (has === undefined) {
    has = font.hasGlyphForCodePoint(cp);
    m.set(cp, has);
  }
  return has;
}

/** The fallback face for coverage look-ups only (always the process's parsed copy). */
function fallbackFont(face: FallbackFace): FontkitFont {
  return parsedFont(FALLBACK_FILES[face]);
}

export interface Run {
  text: string;
  /** Registered font name, or null for the document's current font. */
  font: string | null;
}

/**
 * Splits text into runs by glyph coverage: characters the primary font has (and those no font
 * has, which stay in the primary font as .notdef) in the primary, others in the first fallback
 * that has them. Spaces and marks join the run they are in, so a CJK phrase stays one run.
 */
export function splitRuns(text: string, primary: FontkitFont): Run[] {
  const runs: Run[] = [];
  const faces = fallbacksFor(primary.postscriptName);
  let cur: Run | null = null;
  for (const ch of text) {
    const cp = ch.codePointAt(0) as number;
    let font: string | null = null;
    // ASCII and whitespace always stay in the current run's font.
    if (cp > 0x7f && !covers(primary.postscriptName, primary, cp)) {
      for (const face of faces) {
        if (covers(FALLBACK_NAME[face], fallbackFont(face), cp)) {
          font = FALLBACK_NAME[face];
          break;
        }
      }
    }
    if (cur && (cur.font === font || (cp <= 0x20 && cur.font !== null))) cur.text += ch;
    else {
      cur = { text: ch, font };
      runs.push(cur);
    }
  }
  return runs;
}

/** Whether every character of `text` is in the primary font (the common case: no splitting). */
function primaryCovers(text: string, primary: FontkitFont): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x7f) {
      const cp = text.codePointAt(i) as number;
      if (!covers(primary.postscriptName, primary, cp)) {
        // A character no fallback has either stays .notdef in the primary; nothing to split.
        if (fallbacksFor(primary.postscriptName).some((f) => covers(FALLBACK_NAME[f], fallbackFont(f), cp))) return false;
      }
      if (cp > 0xffff) i++;
    }
  }
  return true;
}

type Internal = PDFKit.PDFDocument & {
  _font: { font: FontkitFont; ascender: number; widthOfString(s: string, size: number, features?: unknown): number };
  _fontSize: number;
  _fragment(text: string, x: number, y: number, options: Record<string, unknown>): void;
  widthOfString(s: string, options?: Record<string, unknown>): number;
};

/**
 * Draws and measures each run of text with the font that has its glyphs. pdfkit measures words
 * (line wrapping, alignment, our column layout) through `widthOfString` and draws every line
 * fragment through `_fragment`, so both are wrapped on this document: a CJK run is measured
 * with the CJK font's advances and drawn in that font on the primary font's baseline. Text the
 * primary font covers takes pdfkit's own path unchanged.
 */
export function installFontFallback(document: PDFKit.PDFDocument): void {
  adoptEmbeddedFonts(document);
  const doc = document as Internal;
  // Fallbacks are registered on first use: most documents need none, and reading a 10 MB file
  // per document (sharing off) or per renderer process (on) is not free.
  const registered = new Set<string>();
  const origWidth = doc.widthOfString.bind(doc);
  const origFragment = doc._fragment.bind(doc);

  const withFont = <T>(name: string | null, fn: () => T): T => {
    if (name === null) return fn();
    if (!registered.has(name)) {
      const face = (Object.keys(FALLBACK_NAME) as FallbackFace[]).find((f) => FALLBACK_NAME[f] === name) as FallbackFace;
      doc.registerFont(name, fontAt(FALLBACK_FILES[face]) as unknown as string);
      registered.add(name);
    }
    const saved = doc._font;
    doc.font(name);
    try {
      return fn();
    } finally {
      doc._font = saved;
    }
  };

  doc.widthOfString = (s: string, options: Record<string, unknown> = {}) => {
    const text = `${s}`;
    if (primaryCovers(text, doc._font.font)) return origWidth(text, options);
    let w = 0;
    const runs = splitRuns(text, doc._font.font);
    for (const run of runs) w += withFont(run.font, () => origWidth(run.text, options));
    // pdfkit counts character spacing between runs too.
    const cs = (options.characterSpacing as number | undefined) ?? 0;
    return w + cs * (runs.length - 1);
  };

  doc._fragment = (s: string, x: number, y: number, options: Record<string, unknown>) => {
    const text = `${s}`.replace(/\n/g, '');
    if (!text || primaryCovers(text, doc._font.font)) return origFragment(s, x, y, options);
    // Alignment is resolved here once for the whole line; the runs are then drawn left-aligned.
    let startX = x;
    const align = (options.align as string | undefined) ?? 'left';
    if (options.width && (align === 'right' || align === 'center')) {
      const lineWidth = options.lineWidth as number;
      const width = doc.widthOfString(align === 'right' ? text.replace(/\s+$/, '') : text, options);
      startX += align === 'right' ? lineWidth - width : lineWidth / 2 - width / 2;
    }
    // The primary font's baseline for every run, so a CJK run does not sit lower (Noto's ascender is higher).
    const baseline = options.baseline === undefined || options.baseline === 'top' ? -((doc._font.ascender / 1000) * doc._fontSize) : options.baseline;
    let cx = startX;
    for (const run of splitRuns(text, doc._font.font)) {
      withFont(run.font, () => {
        const runOpts = { ...options, align: 'left', width: undefined, textWidth: undefined, wordCount: undefined, baseline };
        origFragment(run.text, cx, y, runOpts);
        cx += origWidth(run.text, options);
      });
    }
  };
}
