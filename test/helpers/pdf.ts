import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Text of a PDF via poppler's pdftotext (installed by .ci/run). */
export function pdfText(pdf: Buffer): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pdf-'));
  try {
    const file = path.join(dir, 'doc.pdf');
    fs.writeFileSync(file, pdf);
    return execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Embedded files of a PDF via pdfdetach: name → bytes. */
export function pdfAttachments(pdf: Buffer): Record<string, Buffer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pdf-'));
  try {
    const file = path.join(dir, 'doc.pdf');
    fs.writeFileSync(file, pdf);
    const out = path.join(dir, 'out');
    fs.mkdirSync(out);
    execFileSync('pdfdetach', ['-saveall', '-o', out, file]);
    return Object.fromEntries(fs.readdirSync(out).map((n) => [n, fs.readFileSync(path.join(out, n))]));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
