/**
 * Header layout under the API's limits: custom fields (50 fields, values up to 2,000 characters)
 * and a seller name with a line break. Checked on word positions (pdftotext -bbox), the way
 * the audit found the defects: the title had landed in the footer or vanished, fields were
 * scattered one per page, and a two-line name overprinted the footer's address line.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderDocument } from '../../../shared/documents/renderDocument';
import { CONTENT_BOTTOM } from '../../../shared/formats/pdf/layout';
import { footerColumns } from '../../../shared/formats/pdf/parties';
import { makeDocumentInput, makeSeller } from './fixtures';
import { pageCount, pageTexts } from './pdfTools';

interface Word {
  page: number;
  text: string;
  xMin: number;
  yMin: number;
  xMax: number;
  yMax: number;
}

function withFile<T>(pdf: Buffer, fn: (file: string) => T): T {
  const dir = mkdtempSync(path.join(tmpdir(), 'pdf-bbox-'));
  const file = path.join(dir, 'doc.pdf');
  writeFileSync(file, pdf);
  try {
    return fn(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const unescapeXml = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

/** Every word with its box, pages numbered from 1 (pdftotext -bbox). */
function words(pdf: Buffer): Word[] {
  const html = withFile(pdf, (file) => execFileSync('pdftotext', ['-bbox', '-enc', 'UTF-8', file, '-'], { encoding: 'utf8', maxBuffer: 64 << 20 }));
  const out: Word[] = [];
  html
    .split(/<page /)
    .slice(1)
    .forEach((chunk, i) => {
      for (const m of chunk.matchAll(/<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<\/word>/g)) {
        out.push({ page: i + 1, xMin: +m[1], yMin: +m[2], xMax: +m[3], yMax: +m[4], text: unescapeXml(m[5]) });
      }
    });
  return out;
}

/** Text in reading order without layout, all whitespace removed: a wrapped value reads whole. */
function compactText(pdf: Buffer): string {
  const raw = withFile(pdf, (file) => execFileSync('pdftotext', ['-enc', 'UTF-8', file, '-'], { encoding: 'utf8', maxBuffer: 64 << 20 }));
  return raw.replace(/\s+/g, '');
}

/** Pairs of words on the same page whose boxes overlap by more than a sliver. */
function overlaps(all: Word[]): Array<[string, string, number]> {
  const found: Array<[string, string, number]> = [];
  for (let i = 0; i < all.length; i++) {
    for (let j = i + 1; j < all.length; j++) {
      const a = all[i];
      const b = all[j];
      if (a.page !== b.page) continue;
      const w = Math.min(a.xMax, b.xMax) - Math.max(a.xMin, b.xMin);
      const h = Math.min(a.yMax, b.yMax) - Math.max(a.yMin, b.yMin);
      if (w > 1 && h > 1) found.push([a.text, b.text, a.page]);
    }
  }
  return found;
}

const seller = makeSeller();
/** Words the footer band may contain: the footer lines and "[ENTWURF ·] Seite X von Y". */
const FOOTER_WORDS = new Set([...footerColumns(seller).flat().join(' ').split(/\s+/), 'Seite', 'von', '·', 'ENTWURF']);

function wordsInFooterBand(all: Word[]): Word[] {
  return all.filter((w) => w.yMax > CONTENT_BOTTOM + 0.5 && !FOOTER_WORDS.has(w.text) && !/^\d+$/.test(w.text));
}

/** The 17 pt title: its words are the only ones this tall (the 15 pt letterhead is about 17.5). */
function titleWords(all: Word[]): Word[] {
  return all.filter((w) => w.yMax - w.yMin > 18.5);
}

/** A value of about `length` characters made of numbered words, so a missing part shows. */
function longValue(tag: string, length: number): string {
  const parts: string[] = [];
  for (let i = 0; parts.join(' ').length < length; i++) parts.push(`${tag}w${i}`);
  return parts.join(' ').slice(0, length).trim();
}

function checkLayout(pdf: Buffer, fields: Record<string, string>, maxPages: number): void {
  const all = words(pdf);
  const title = titleWords(all);
  expect(title.map((w) => w.text).join(' ')).toBe('Rechnung RE-2026-00042');
  expect(new Set(title.map((w) => w.page))).toEqual(new Set([1]));
  expect(Math.max(...title.map((w) => w.yMax))).toBeLessThanOrEqual(CONTENT_BOTTOM);

  // The item table (its header row "Pos. Beschreibung …") comes after the title.
  const tableHead = all.find((w) => w.text === 'Pos.');
  expect(tableHead).toBeDefined();
  expect(tableHead!.page > 1 || tableHead!.yMin > title[0].yMax).toBe(true);

  expect(wordsInFooterBand(all)).toEqual([]);
  expect(overlaps(all)).toEqual([]);

  const text = compactText(pdf);
  for (const [label, value] of Object.entries(fields)) {
    expect(text).toContain(label.replace(/\s+/g, ''));
    expect(text).toContain(value.replace(/\s+/g, ''));
  }
  expect(pageCount(pdf)).toBeLessThanOrEqual(maxPages);
}

const render = (customFields: Record<string, string>, overrides: Parameters<typeof makeDocumentInput>[0] = {}) =>
  renderDocument('pdf', makeDocumentInput({ ...overrides, invoice: { customFields, ...overrides.invoice } }));

describe('invoice PDF: custom fields never push the title off page 1', () => {
  it('A: one value of 1,200 characters', async () => {
    const fields = { Bestellnummer: 'PO-4711', Projektbeschreibung: longValue('a', 1200) };
    const pdf = await render(fields);
    checkLayout(pdf, fields, 2);
    // The short field stays in the header, next to the standard facts.
    expect(pageTexts(pdf)[0]).toMatch(/Bestellnummer PO-4711/);
  });

  it('B: one value of 2,000 characters (the API maximum)', async () => {
    const fields = { Hinweis: longValue('b', 2000) };
    checkLayout(await render(fields), fields, 2);
  });

  it('C: 50 short fields (the API maximum)', async () => {
    const fields = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`Feld ${String(i).padStart(2, '0')}`, `Wert-${i}`]));
    const pdf = await render(fields);
    checkLayout(pdf, fields, 3);
    // Header fields first, the rest below in the same order.
    const text = compactText(pdf);
    const positions = Object.keys(fields).map((k) => text.indexOf(k.replace(/\s+/g, '')));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
  });

  it('D: 40 fields', async () => {
    const fields = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`Referenz ${i}`, `R-${1000 + i}`]));
    checkLayout(await render(fields), fields, 3);
  });

  it('50 fields of 2,000 characters with 100-character labels, on a draft', async () => {
    const fields = Object.fromEntries(
      Array.from({ length: 50 }, (_, i) => [`${String(i).padStart(2, '0')} ${'Bezeichnung '.repeat(8)}`.slice(0, 100).trim(), longValue(`f${i}x`, 2000)]),
    );
    const pdf = await render(fields, { invoice: { status: 'entwurf', number: null } });
    const all = words(pdf);
    const title = titleWords(all);
    expect(title.map((w) => w.text).join(' ')).toBe('Rechnung'); // the ENTWURF badge is 11 pt
    expect(new Set(title.map((w) => w.page))).toEqual(new Set([1]));
    expect(wordsInFooterBand(all)).toEqual([]);
    expect(overlaps(all)).toEqual([]);
    const text = compactText(pdf);
    for (const value of Object.values(fields)) expect(text).toContain(value.replace(/\s+/g, ''));
    // About 280 pt per field: a page holds two; nothing is spread one line per page.
    expect(pageCount(pdf)).toBeLessThanOrEqual(30);
  });
});

describe('invoice PDF: a line break in the seller name', () => {
  it('prints the name on one line in the footer, the sender line and the running header', async () => {
    const pdf = await renderDocument(
      'pdf',
      makeDocumentInput({ seller: { company: 'Müller & Söhne\nSoftware GmbH' }, invoice: { customFields: { Hinweis: longValue('n', 2000) } } }),
    );
    const all = words(pdf);
    expect(overlaps(all)).toEqual([]);
    const pages = pageTexts(pdf);
    expect(pages.length).toBeGreaterThan(1);
    // Footer of every page: the name and the first address line on lines of their own.
    for (const page of pages) {
      expect(page).toMatch(/^Müller & Söhne · Software GmbH\b/m);
      expect(page).toMatch(/^Mariahilfer Straße 1\b/m);
    }
    // Sender line above the address window (shrunk to fit, on one line).
    expect(pages[0]).toMatch(/^Müller & Söhne · Software GmbH · Mariahilfer Straße 1 · 1060 Wien$/m);
    expect(pages[1]).toMatch(/^Rechnung RE-2026-00042 vom 10\.03\.2026 · Müller & Söhne · Software GmbH$/m);
  });
});
