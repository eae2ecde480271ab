/**
 * DejaVu Sans, embedded as TrueType subsets. The 14 standard PDF fonts are never used: they are
 * not embedded (PDF/A forbids that) and their WinAnsi encoding has no reliable "€" and no
 * characters beyond Latin-1 that customer names may contain.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const TTF_DIR = path.join(path.dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf');

const FILES = {
  regular: 'DejaVuSans.ttf',
  bold: 'DejaVuSans-Bold.ttf',
  italic: 'DejaVuSans-Oblique.ttf',
  boldItalic: 'DejaVuSans-BoldOblique.ttf',
  mono: 'DejaVuSansMono.ttf',
} as const;

export type FontStyle = keyof typeof FILES;

/** Names under which the fonts are registered on every document. */
export const FONT: Record<FontStyle, string> = {
  regular: 'DejaVuSans',
  bold: 'DejaVuSans-Bold',
  italic: 'DejaVuSans-Oblique',
  boldItalic: 'DejaVuSans-BoldOblique',
  mono: 'DejaVuSansMono',
};

/** Path of the regular face; pdfkit's constructor takes it as the default font so Helvetica is never instantiated. */
export const DEFAULT_FONT_PATH = path.join(TTF_DIR, FILES.regular);

let cache: Map<FontStyle, Buffer> | null = null;

function fontBuffers(): Map<FontStyle, Buffer> {
  if (!cache) {
    cache = new Map((Object.keys(FILES) as FontStyle[]).map((k) => [k, readFileSync(path.join(TTF_DIR, FILES[k]))]));
  }
  return cache;
}

export function registerFonts(doc: PDFKit.PDFDocument): void {
  for (const [style, buf] of fontBuffers()) doc.registerFont(FONT[style], buf);
}
