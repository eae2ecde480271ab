/**
 * Reads produced PDFs back with poppler (pdftotext, pdfinfo, pdffonts, pdfdetach), the way an
 * auditor's or recipient's software would see them.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PDFArray, PDFDocument, PDFRawStream, decodePDFRawStream } from '@cantoo/pdf-lib';

function withFile<T>(pdf: Buffer, fn: (file: string, dir: string) => T): T {
  const dir = mkdtempSync(path.join(tmpdir(), 'pdf-test-'));
  const file = path.join(dir, 'doc.pdf');
  writeFileSync(file, pdf);
  try {
    return fn(file, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Text per page (pdftotext -layout), with runs of spaces collapsed so assertions read naturally. */
export function pageTexts(pdf: Buffer): string[] {
  const raw = withFile(pdf, (file) => execFileSync('pdftotext', ['-layout', '-enc', 'UTF-8', file, '-'], { encoding: 'utf8' }));
  const pages = raw.split('\f');
  if (pages.length > 1 && pages[pages.length - 1].trim() === '') pages.pop();
  return pages.map(collapse);
}

export function collapse(text: string): string {
  return text
    .split('\n')
    .map((l) => l.replace(/[ \t\u00a0]+/g, ' ').trim())
    .filter(Boolean)
    .join('\n');
}

export interface WordBox {
  text: string;
  xMin: number;
  yMin: number;
  xMax: number;
  yMax: number;
}

/** Words and their boxes per page (pdftotext -bbox; points, origin top left like pdfkit's). */
export function wordBoxes(pdf: Buffer): WordBox[][] {
  const html = withFile(pdf, (file) => execFileSync('pdftotext', ['-bbox', '-enc', 'UTF-8', file, '-'], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 }));
  const entity: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
  return html
    .split(/<page\b/)
    .slice(1)
    .map((page) =>
      [...page.matchAll(/<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<\/word>/g)].map((m) => ({
        text: m[5].replace(/&(amp|lt|gt|quot|apos);/g, (_, n: string) => entity[n]),
        xMin: Number(m[1]),
        yMin: Number(m[2]),
        xMax: Number(m[3]),
        yMax: Number(m[4]),
      })),
    );
}

export function allText(pdf: Buffer): string {
  return pageTexts(pdf).join('\n');
}

export function pdfInfo(pdf: Buffer, ...args: string[]): string {
  return withFile(pdf, (file) => execFileSync('pdfinfo', [...args, file], { encoding: 'utf8' }));
}

export function pageCount(pdf: Buffer): number {
  const m = /^Pages:\s+(\d+)/m.exec(pdfInfo(pdf));
  if (!m) throw new Error('pdfinfo reported no page count');
  return Number(m[1]);
}

export function xmpOf(pdf: Buffer): string {
  return pdfInfo(pdf, '-meta');
}

/** Rows of `pdffonts`: name, type, embedded. */
export function fonts(pdf: Buffer): Array<{ name: string; type: string; embedded: boolean }> {
  const out = withFile(pdf, (file) => execFileSync('pdffonts', [file], { encoding: 'utf8' }));
  return out
    .split('\n')
    .slice(2)
    .filter((l) => l.trim())
    .map((l) => {
      const parts = l.trim().split(/\s+/);
      // name type [type2] encoding emb sub uni object ID
      const emb = parts[parts.length - 5];
      return { name: parts[0], type: parts[1], embedded: emb === 'yes' };
    });
}

export function detachList(pdf: Buffer): string[] {
  const out = withFile(pdf, (file) => execFileSync('pdfdetach', ['-list', file], { encoding: 'utf8' }));
  return out
    .split('\n')
    .slice(1)
    .map((l) => l.replace(/^\s*\d+:\s*/, '').trim())
    .filter(Boolean);
}

export function detachFile(pdf: Buffer, name: string): Buffer {
  return withFile(pdf, (file, dir) => {
    const target = path.join(dir, 'extracted');
    execFileSync('pdfdetach', ['-savefile', name, '-o', target, file]);
    return readFileSync(target);
  });
}

/** Decoded content stream of each page (operators as text), for checks on what is drawn. */
export async function pageContents(pdf: Buffer): Promise<string[]> {
  const doc = await PDFDocument.load(new Uint8Array(pdf), { updateMetadata: false });
  return doc.getPages().map((page) => {
    const contents = page.node.Contents();
    const streams = contents instanceof PDFArray ? contents.asArray().map((r) => doc.context.lookup(r)) : [contents];
    return streams
      .filter((s): s is PDFRawStream => s instanceof PDFRawStream)
      .map((s) => Buffer.from(decodePDFRawStream(s).decode()).toString('latin1'))
      .join('\n');
  });
}
