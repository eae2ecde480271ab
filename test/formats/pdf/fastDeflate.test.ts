/**
 * The streams deflated at level 1 (shared/formats/pdf/fastDeflate.ts) hold exactly the bytes
 * pdfkit's own deflate held: the same page content, font subsets and maps, for the PDF and the
 * ZUGFeRD of a 10-item invoice; only their compressed form differs.
 */
import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { renderDocument } from '../../../shared/documents/renderDocument';
import { fastDeflate } from '../../../shared/formats/pdf/fastDeflate';
import { makeDocumentInput, manyItems } from './fixtures';

/** Every FlateDecode stream of the file, inflated, in file order. */
function inflatedStreams(pdf: Buffer): Buffer[] {
  const out: Buffer[] = [];
  const text = pdf.toString('latin1');
  const re = /\/Filter \/FlateDecode[\s\S]*?>>\s*stream\r?\n/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const start = m.index + m[0].length;
    const end = text.indexOf('endstream', start);
    out.push(inflateSync(pdf.subarray(start, end)));
  }
  return out;
}

describe('streams deflated at level 1', () => {
  for (const kind of ['pdf', 'zugferd'] as const) {
    it(`${kind}: the same stream contents as at pdfkit's default level, in a few more bytes`, async () => {
      const input = makeDocumentInput({ items: manyItems(10) });
      const fast = await renderDocument(kind, input);
      fastDeflate.enabled = false;
      let plain: Buffer;
      try {
        plain = await renderDocument(kind, input);
      } finally {
        fastDeflate.enabled = true;
      }
      const [a, b] = [inflatedStreams(fast), inflatedStreams(plain)];
      expect(a.length).toBeGreaterThan(3);
      expect(a.length).toBe(b.length);
      for (let i = 0; i < a.length; i++) expect(a[i].equals(b[i]), `stream ${i}`).toBe(true);
      expect(fast.length).toBeGreaterThan(plain.length);
      expect(fast.length).toBeLessThan(plain.length * 1.1);
    });
  }
});
