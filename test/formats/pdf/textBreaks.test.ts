import { describe, expect, it } from 'vitest';
import { renderInvoicePdf } from '../../../shared/formats/pdf/invoicePdf';
import { createDocument, setStyle } from '../../../shared/formats/pdf/layout';
import { MAX_RUN, ZWSP, breakLongRuns, splitToFit } from '../../../shared/formats/pdf/textBreaks';
import { makeDocumentInput } from './fixtures';
import { pageCount, pageTexts } from './pdfTools';

describe('breakLongRuns', () => {
  it('leaves text without long runs unchanged', () => {
    const text = 'Umsatzsteuer-Identifikationsnummer ATU12345678, https://example.at/pfad\n\tzweite Zeile';
    expect(breakLongRuns(text)).toBe(text);
    expect(breakLongRuns('')).toBe('');
  });

  it(`cuts every run longer than ${MAX_RUN} characters into pieces of at most ${MAX_RUN}`, () => {
    const out = breakLongRuns(`kurz ${'a'.repeat(100)} ${'b'.repeat(40)}`);
    expect(out).toBe(`kurz ${'a'.repeat(40)}${ZWSP}${'a'.repeat(40)}${ZWSP}${'a'.repeat(20)} ${'b'.repeat(40)}`);
    expect(breakLongRuns('x'.repeat(10), 4, '\n')).toBe('xxxx\nxxxx\nxx');
  });

  it('counts a no-break space as part of a run (pdfkit cannot break there either)', () => {
    const run = 'a\u00a0'.repeat(30);
    expect(
      breakLongRuns(run)
        .split(ZWSP)
        .map((p) => p.length),
    ).toEqual([40, 20]);
  });

  it('never splits a surrogate pair or puts a break before a combining mark', () => {
    const emoji = '😀'.repeat(50);
    expect(
      breakLongRuns(emoji)
        .split(ZWSP)
        .map((p) => Array.from(p).length),
    ).toEqual([40, 10]);
    const accented = `${'a'.repeat(39)}e\u0301${'c'.repeat(10)}`;
    const [first] = breakLongRuns(accented).split(ZWSP);
    expect(first.endsWith('e\u0301')).toBe(true);
  });

  it('is linear: 200,000 characters take milliseconds', () => {
    const out = breakLongRuns('a'.repeat(200_000));
    expect(out.split(ZWSP)).toHaveLength(5000);
  });
});

describe('splitToFit', () => {
  it('returns the longest prefix of whole words that fits, and the rest', () => {
    const doc = createDocument({ title: 't', author: 'a', subject: 's', date: new Date(0) }, false);
    doc.addPage();
    setStyle(doc, { size: 10 });
    const text = Array.from({ length: 300 }, (_, i) => `Wort${i}`).join(' ');
    const line = doc.currentLineHeight(true);
    const [head, rest] = splitToFit(doc, text, 200, 5 * line);
    expect(doc.heightOfString(head, { width: 200 })).toBeLessThanOrEqual(5 * line);
    expect(doc.heightOfString(`${head} ${rest.split(' ')[0]}`, { width: 200 })).toBeGreaterThan(5 * line);
    expect(`${head} ${rest}`).toBe(text);
    expect(splitToFit(doc, 'kurz', 200, 5 * line)).toEqual(['kurz', '']);
    // Breaks at zero-width spaces too, so a long run already cut by breakLongRuns can be split.
    const [runHead, runRest] = splitToFit(doc, breakLongRuns('a'.repeat(10_000)), 200, 5 * line);
    expect(runHead.length).toBeGreaterThan(100);
    expect(runHead.replaceAll(ZWSP, '') + runRest.replaceAll(ZWSP, '')).toBe('a'.repeat(10_000));
  });
});

describe('notes and footer text with long runs', () => {
  it('renders 10,000 characters without a space in each, completely', async () => {
    const pdf = await renderInvoicePdf(makeDocumentInput({ invoice: { notes: 'n'.repeat(10_000), footerText: 'f'.repeat(10_000) } }));
    expect(pageCount(pdf)).toBeLessThan(10);
    const text = pageTexts(pdf).join('\n');
    expect(text.match(/n{20,}/g)!.join('')).toBe('n'.repeat(10_000));
    expect(text.match(/f{20,}/g)!.join('')).toBe('f'.repeat(10_000));
  }, 30_000);
});
