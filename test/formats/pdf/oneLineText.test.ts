/**
 * One-line texts drawn without pdfkit's LineWrapper (shared/formats/pdf/oneLineText.ts) give the
 * same document as pdfkit's own path: the same bytes for invoices of every kind, and for texts
 * whose width sweeps across their column's width. The shortcut relies on UAX #14 allowing breaks
 * only after spaces in the text it takes; that is checked against pdfkit's own line breaker.
 */
import { createRequire } from 'node:module';
import PDFDocument from 'pdfkit';
import { describe, expect, it, vi } from 'vitest';
import { renderDocument } from '../../../shared/documents/renderDocument';
import { createDocument, toBuffer } from '../../../shared/formats/pdf/layout';
import { breaksOnlyAtSpaces, oneLineText } from '../../../shared/formats/pdf/oneLineText';
import { makeDocumentInput, manyItems } from './fixtures';
import { fonts } from './pdfTools';

// The line breaker pdfkit itself uses (its dependency `linebreak`), resolved from pdfkit.
const fromPdfkit = createRequire(createRequire(import.meta.url).resolve('pdfkit'));
const LineBreaker = fromPdfkit('linebreak') as new (text: string) => { nextBreak(): { position: number; required: boolean } | null };

/** Positions where pdfkit's wrapper may break `text` other than after a space (or a required break). */
function otherBreaks(text: string): number[] {
  const breaker = new LineBreaker(text);
  const out: number[] = [];
  for (let bk = breaker.nextBreak(); bk; bk = breaker.nextBreak()) {
    if (bk.required || (bk.position < text.length && text[bk.position - 1] !== ' ')) out.push(bk.position);
  }
  return out;
}

async function bothWays<T>(render: () => Promise<T>): Promise<[T, T]> {
  const fast = await render();
  oneLineText.enabled = false;
  try {
    return [fast, await render()];
  } finally {
    oneLineText.enabled = true;
  }
}

const LATIN = Array.from({ length: 0x17f - 0xc0 + 1 }, (_, i) => String.fromCharCode(0xc0 + i)).join('');

describe('breaksOnlyAtSpaces', () => {
  it('accepts only text in which pdfkit finds no break but after a space: every string of up to 4 characters of the alphabet, and random longer ones', () => {
    const alphabet = [...' 0Aa.,:;)#&@*_=\'"\u00B7\u00A7<>\u20AC%+($\u00B0-/'];
    let accepted = 0;
    const check = (s: string) => {
      if (!breaksOnlyAtSpaces(s)) return;
      accepted++;
      expect(otherBreaks(s), JSON.stringify(s)).toEqual([]);
    };
    for (const a of alphabet) {
      for (const b of alphabet) {
        for (const c of alphabet) {
          check(a + b + c);
          for (const d of alphabet) check(a + b + c + d);
        }
      }
    }
    for (const ch of LATIN) for (const s of [ch, `a${ch}`, `${ch}a`, `0${ch}`, `${ch}0`, `.${ch}`, `-${ch}`, `${ch}-0`]) check(s);
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x80000000;
    };
    for (let i = 0; i < 50_000; i++) {
      let s = '';
      for (let k = 1 + Math.floor(next() * 16); k > 0; k--) s += alphabet[Math.floor(next() * alphabet.length)];
      check(s);
    }
    expect(accepted).toBeGreaterThan(500_000);
  });

  it('takes the texts of an invoice, leaves line breaks, other scripts and breakable punctuation to pdfkit', () => {
    for (const s of [
      'Summe netto',
      '1.234,50 €',
      '-99,00 €',
      'USt 20 % auf 2.250,00 €',
      'RE-2026-00042',
      '15.03.2026',
      'AT61 1904 3002 3457 3201',
      '+43 1 234 56 78',
      'Seite 1 von 2',
      'ENTWURF · Seite 1 von 2',
      'Łódź Straße 5',
    ])
      expect(breaksOnlyAtSpaces(s), s).toBe(true);
    for (const s of ['', 'a\nb', 'a\u00ADb', 'max@mueller-soehne.at', 'Hin/Rück', 'Mo–Fr', 'S.(1)', 'ok!', '北京', 'a\tb'])
      expect(breaksOnlyAtSpaces(s), s).toBe(false);
  });

  it('every character it takes is in DejaVu Sans (no fallback font splits such text)', async () => {
    const pdf = await renderDocument('pdf', makeDocumentInput({ customer: { company: LATIN.slice(0, 90), name: LATIN.slice(90) } }));
    expect(fonts(pdf).every((f) => f.name.includes('DejaVuSans'))).toBe(true);
  });
});

describe('one-line texts without the line wrapper', () => {
  const md =
    '# Leistungsumfang\n\nDie **Software** wird _vollständig_ geliefert.\n\n- Punkt eins\n- Punkt zwei mit einem langen Text, der umbricht und weiter geht bis zum Ende der Zeile und darüber hinaus\n\n| A | B |\n|---|---|\n| 1 | 2 |\n\n```\ncode\n```\n';
  // Descriptions from 20 to 99 characters: some end just inside, at or just past their column.
  const growing = Array.from({ length: 80 }, (_, i) => ({
    description: `Leistung ${'Abcdefghij klmnopqrst uvwxyz ÄÖÜ äöü ß 0123456789 '.repeat(3).slice(0, 11 + i)}`.trim(),
    quantity: String(1 + (i % 7)),
    unit: i % 2 ? 'Std' : 'Stk',
    unitPrice: `${(i * 37.5).toFixed(2)}`,
    taxRate: i % 3 ? '20' : '10',
  }));
  const cases = {
    'the default invoice': makeDocumentInput(),
    '10 items': makeDocumentInput({ items: manyItems(10) }),
    '60 items (page breaks)': makeDocumentInput({ items: manyItems(60) }),
    'descriptions of every length up to two lines': makeDocumentInput({ items: growing }),
    'a draft': makeDocumentInput({ invoice: { status: 'entwurf', number: null } }),
    'a quote with Markdown details': makeDocumentInput({ invoice: { type: 'angebot', number: 'AN-2026-00001', detailsMarkdown: md } }),
    'notes, footer text, custom fields, long names': makeDocumentInput({
      customer: { company: 'Sehr Lange Firmenbezeichnung Handels- und Dienstleistungsgesellschaft mit beschränkter Haftung & Co. KG' },
      seller: { contactName: 'Max Muster', contactPhone: '+43 1 234 56 78', contactEmail: 'max@mueller-soehne.at' },
      invoice: {
        buyerReference: 'KST-4711',
        notes: 'Vielen Dank für Ihren Auftrag! Bitte überweisen Sie den Betrag bis zum 24.03.2026.',
        footerText: 'Es gelten unsere AGB. Gerichtsstand Wien.',
        customFields: { Projekt: 'Alpha 2026', Kostenstelle: '4711', 'Ein sehr langer Feldname': 'x '.repeat(120) },
      },
    }),
  };
  for (const [name, input] of Object.entries(cases)) {
    it(`${name}: the same bytes as through pdfkit's wrapper`, async () => {
      const [fast, wrapped] = await bothWays(() => renderDocument('pdf', input));
      expect(fast.equals(wrapped)).toBe(true);
    });
  }

  it("ZUGFeRD: the same bytes as through pdfkit's wrapper", async () => {
    const input = makeDocumentInput({ items: manyItems(10), invoice: { buyerReference: 'KST-4711' } });
    const [fast, wrapped] = await bothWays(() => renderDocument('zugferd', input));
    expect(fast.equals(wrapped)).toBe(true);
  });

  it('a text whose width sweeps across its column width, right- and left-aligned, near the page bottom: the same cursor and bytes', async () => {
    const draw = async () => {
      const doc = createDocument({ title: 't', author: 'a', subject: 's', date: new Date(0) }, false);
      doc.addPage();
      const ys: number[] = [];
      for (const text of ['1.234,50 €', 'Summe netto', 'Beratung Buchhaltung und Jahresabschluss']) {
        doc.fontSize(9.5);
        const w = doc.widthOfString(text);
        for (let d = -0.004; d <= 0.004; d += 0.0005) {
          for (const align of ['left', 'right'] as const) {
            doc.text(text, 60, 100, { width: w + d, align, lineGap: 1 });
            ys.push(doc.y, doc.heightOfString(text, { width: w + d }));
          }
        }
        // The last lines of the page: the wrapper moves on to a new page before a line that does not fit.
        for (let y = 730; y < 760; y += 3) {
          doc.text(text, 60, y, { width: w + 1 });
          ys.push(doc.y, doc.bufferedPageRange().count);
        }
      }
      return { ys, bytes: await toBuffer(doc) };
    };
    // pdfkit's _text runs the wrapper; the shortcut skips it for the lines that fit.
    const wrapperRuns = vi.spyOn(PDFDocument.prototype as unknown as { _text: () => unknown }, '_text');
    const [fast, wrapped] = await bothWays(async () => {
      wrapperRuns.mockClear();
      return { ...(await draw()), wrapperRuns: wrapperRuns.mock.calls.length };
    });
    wrapperRuns.mockRestore();
    expect(fast.ys).toEqual(wrapped.ys);
    expect(fast.bytes.equals(wrapped.bytes)).toBe(true);
    expect(fast.wrapperRuns).toBeGreaterThan(0);
    expect(fast.wrapperRuns).toBeLessThan(wrapped.wrapperRuns * 0.7);
  });
});
