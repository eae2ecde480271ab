import { describe, expect, it } from 'vitest';
import { CONTENT_BOTTOM, CONTENT_LEFT, CONTENT_RIGHT, createDocument, toBuffer } from '../../../shared/formats/pdf/layout';
import { renderMarkdown } from '../../../shared/formats/pdf/markdownToPdf';
import { fonts, pageContents, pageCount, pageTexts, wordBoxes } from './pdfTools';

async function render(markdown: string): Promise<Buffer> {
  const doc = createDocument({ title: 'Markdown', author: 'Test', subject: 'Test', date: new Date('2026-01-01T00:00:00Z') }, false);
  doc.addPage();
  renderMarkdown(doc, markdown);
  return toBuffer(doc);
}

describe('renderMarkdown', () => {
  it('renders headings, paragraphs and inline styles with the matching fonts', async () => {
    const pdf = await render(
      ['# Titel Eins', '', '## Untertitel', '', '### Abschnitt', '', 'Text mit **fett**, *kursiv*, ***beides*** und `code()`.'].join('\n'),
    );
    const [page] = pageTexts(pdf);
    expect(page).toContain('Titel Eins');
    expect(page).toContain('Untertitel');
    expect(page).toContain('Abschnitt');
    expect(page).toContain('Text mit fett, kursiv, beides und code().');
    const used = fonts(pdf).map((f) => f.name.replace(/^[A-Z]{6}\+/, ''));
    expect(used).toEqual(expect.arrayContaining(['DejaVuSans', 'DejaVuSans-Bold', 'DejaVuSans-Oblique', 'DejaVuSans-BoldOblique', 'DejaVuSansMono']));
  });

  it('sizes h1 > h2 > h3 > body text', async () => {
    const [ops] = await pageContents(await render('# A\n\n## B\n\n### C\n\nbody'));
    const sizes = [...ops.matchAll(/\/F\d+ ([\d.]+) Tf/g)].map((m) => Number(m[1]));
    const distinct = [...new Set(sizes)];
    expect(distinct.slice(0, 4)).toEqual([...distinct.slice(0, 4)].sort((a, b) => b - a));
    expect(distinct.length).toBeGreaterThanOrEqual(4);
  });

  it('renders bullet and numbered lists, nested', async () => {
    const [page] = pageTexts(
      await render(['- Apfel', '- Birne', '  - Williams', '  - Kaiser', '- Quitte', '', '3. drei', '4. vier', '   1. vier-eins'].join('\n')),
    );
    expect(page).toMatch(/• Apfel\n• Birne\n• Williams\n• Kaiser\n• Quitte/);
    expect(page).toMatch(/3\. drei\n4\. vier\n1\. vier-eins/);
  });

  it('indents nested list items further than their parent', async () => {
    const pdf = await render('- Eltern\n  - Kind');
    const [ops] = await pageContents(pdf);
    // Each text run is positioned with "1 0 0 1 x y Tm": parent bullet, parent text, child
    // bullet (= parent text column), child text.
    const xs = [...ops.matchAll(/1 0 0 1 ([\d.]+) [\d.]+ Tm/g)].map((m) => Number(m[1]));
    expect(xs).toHaveLength(4);
    const [parentBullet, parentText, childBullet, childText] = xs;
    expect(parentText).toBeGreaterThan(parentBullet);
    expect(childBullet).toBe(parentText);
    expect(childText).toBeGreaterThan(childBullet);
  });

  it('renders tables with header and rows, repeating the header after a page break', async () => {
    const rows = Array.from({ length: 90 }, (_, i) => `| Zeile ${i + 1} | ${i + 1},00 € | Anmerkung ${i + 1} |`);
    const pages = pageTexts(await render(['| Posten | Betrag | Notiz |', '|---|--:|:-:|', ...rows].join('\n')));
    expect(pages.length).toBeGreaterThan(1);
    for (const page of pages) expect(page).toMatch(/^Posten Betrag Notiz$/m);
    const all = pages.join('\n');
    for (let i = 1; i <= 90; i++) expect(all).toMatch(new RegExp(`^Zeile ${i} ${i},00 € Anmerkung ${i}$`, 'm'));
  });

  it('draws table borders', async () => {
    const [ops] = await pageContents(await render('| A | B |\n|---|---|\n| 1 | 2 |'));
    expect(ops).toMatch(/re\s*\nS/);
  });

  it('renders horizontal rules, block quotes and code blocks', async () => {
    const pdf = await render(['Vorher', '', '---', '', '> Zitat mit **Nachdruck**', '', '```', 'const x = 1;', '```', '', 'Nachher'].join('\n'));
    const [page] = pageTexts(pdf);
    expect(page).toMatch(/Vorher\nZitat mit Nachdruck\nconst x = 1;\nNachher/);
    const [ops] = await pageContents(pdf);
    expect(ops).toMatch(/ l\nS/); // rules and the quote bar are stroked lines
  });

  it('shows raw HTML and entities as text and links with their target', async () => {
    const [page] = pageTexts(await render('Preis &lt; 100 &amp; <b>fett?</b> [Website](https://example.at)'));
    expect(page).toContain('Preis < 100 & <b>fett?</b> Website (https://example.at)');
  });

  it('flows long text onto further pages', async () => {
    const para = 'Dies ist ein längerer Absatz über Umsatzsteuer und Buchhaltung. '.repeat(40);
    const pages = pageTexts(await render(Array.from({ length: 8 }, () => para).join('\n\n')));
    expect(pages.length).toBeGreaterThan(1);
    expect(pages.join(' ').match(/Umsatzsteuer/g)!.length).toBe(320);
  });

  describe('long runs without spaces', () => {
    // pdfkit splits an over-long word quadratically: 200,000 characters ran out of a 4 GB heap.
    // These finish in well under a second; the test timeout is the guard.
    it('renders 200,000 letters without a space on a sane number of pages, all of them', async () => {
      const pdf = await render('a'.repeat(200_000));
      expect(pageCount(pdf)).toBeGreaterThan(20);
      expect(pageCount(pdf)).toBeLessThan(80);
      const text = pageTexts(pdf).join('').replace(/\s/g, '');
      expect(text).toBe('a'.repeat(200_000));
    }, 30_000);

    it('prints a data: URI image or link by its size, not its content', async () => {
      const b64 = Buffer.alloc(45_000, 7).toString('base64');
      expect(b64.length).toBe(60_000);
      const pdf = await render(
        `Vorher ![](data:image/png;base64,${b64}) und [Anhang](data:text/plain;base64,${b64}), ![Logo](data:image/png;base64,${b64}) nachher`,
      );
      expect(pageCount(pdf)).toBe(1);
      const [page] = pageTexts(pdf);
      expect(page).toContain('Vorher [Bild: eingebettete Daten, 45 kB] und Anhang (eingebettete Daten, 45 kB), [Bild: Logo] nachher');
      expect(page).not.toContain('base64');
    }, 30_000);

    it('shortens a long link target in the middle and keeps short ones', async () => {
      const long = `https://example.at/downloads/${'x'.repeat(300)}/datei-ende.pdf`;
      const [page] = pageTexts(await render(`[Kurz](https://example.at/a) [Lang](${long})`));
      expect(page).toContain('Kurz (https://example.at/a)');
      expect(page.replace(/\n/g, '')).toMatch(/Lang \(https:\/\/example\.at\/downloads\/x+…x*\/datei-ende\.pdf\)/);
      expect(page.match(/x/g)!.length).toBeLessThan(100);
    });

    it('breaks long runs in inline code, code blocks and table cells, keeping every character', async () => {
      const pdf = await render(
        [`Code: \`${'y'.repeat(20_000)}\``, '', '```', 'z'.repeat(20_000), '```', '', '| A | B |', '|---|---|', `| ${'q'.repeat(20_000)} | klein |`].join('\n'),
      );
      expect(pageCount(pdf)).toBeLessThan(40);
      const text = pageTexts(pdf).join('\n');
      for (const ch of ['y', 'z', 'q']) expect(text.match(new RegExp(ch, 'g'))!.length).toBe(20_000);
      expect(text).not.toContain('\u200b');
      for (const page of wordBoxes(pdf)) {
        for (const w of page) expect(w.xMax).toBeLessThanOrEqual(CONTENT_RIGHT + 0.5);
      }
    }, 30_000);

    it('leaves text with ordinary words as it was', async () => {
      const words = 'Umsatzsteuer-Identifikationsnummer Donaudampfschifffahrtsgesellschaft https://example.at/pfad';
      const [page] = pageTexts(await render(`${words}\n\n\`kurzer_code()\``));
      expect(page).toContain(words);
      expect(page).toContain('kurzer_code()');
    });
  });

  it('splits a table row taller than a page across pages, the header repeated, nothing below the content area', async () => {
    const words = Array.from({ length: 900 }, (_, i) => `Wort${i + 1}`);
    const pdf = await render(['Einleitung', '', '| a | b |', '|---|---|', `| ${words.join(' ')} | b |`, '| c | d |'].join('\n'));
    const pages = pageTexts(pdf);
    expect(pages).toHaveLength(2);
    for (const page of pages) expect(page).toMatch(/^a b$/m);
    // The row starts on the first page, with its short cell beside it; the rest follows in order.
    expect(pages[0]).toMatch(/^Wort1 Wort2 .* b$/m);
    expect(pages.join('\n').match(/Wort\d+/g)).toEqual(words);
    expect(pages[1]).toMatch(/^c d$/m);
    const boxes = wordBoxes(pdf);
    for (const page of boxes) for (const w of page) expect(w.yMax).toBeLessThanOrEqual(CONTENT_BOTTOM);
    // Row frames and column lines stay in the content area too.
    for (const ops of await pageContents(pdf)) {
      for (const m of ops.matchAll(/^([\d.]+) ([\d.]+) ([\d.]+) ([\d.]+) re$/gm))
        expect(Number(m[2]) + Number(m[4])).toBeLessThanOrEqual(CONTENT_BOTTOM + 0.01);
      for (const m of ops.matchAll(/^([\d.]+) ([\d.]+) [ml]$/gm)) expect(Number(m[2])).toBeLessThanOrEqual(CONTENT_BOTTOM + 0.01);
    }
  });

  it('keeps a short column readable beside columns of long words', async () => {
    const pdf = await render(`| Erste | Zweite | Dritte |\n|---|---|---|\n| ${'a'.repeat(600)} | ${'b'.repeat(600)} | short |`);
    const words = wordBoxes(pdf).flat();
    const short = words.find((w) => w.text === 'short');
    expect(short).toBeDefined();
    expect(short!.xMin).toBeGreaterThanOrEqual(CONTENT_LEFT);
    expect(short!.xMax).toBeLessThanOrEqual(CONTENT_RIGHT);
    const header = words.find((w) => w.text === 'Dritte')!;
    expect(short!.xMin).toBeCloseTo(header.xMin, 0);
  });

  it('stops indenting deeply nested lists and quotes, keeping their text whole', async () => {
    const list = Array.from({ length: 60 }, (_, i) => `${'  '.repeat(i)}- Ebene${i + 1} Text`).join('\n');
    const quotes = `${'> '.repeat(80)}Tief zitierter Text`;
    const pdf = await render(`${list}\n\nDazwischen\n\n${quotes}`);
    const text = pageTexts(pdf).join('\n');
    for (let i = 1; i <= 60; i++) expect(text).toMatch(new RegExp(`^• Ebene${i} Text$`, 'm'));
    expect(text).toMatch(/^Tief zitierter Text$/m);
    const words = wordBoxes(pdf).flat();
    const x = (w: string) => words.find((b) => b.text === w)!.xMin;
    expect(x('Ebene2')).toBeGreaterThan(x('Ebene1'));
    expect(x('Ebene8')).toBeGreaterThan(x('Ebene7'));
    expect(x('Ebene60')).toBe(x('Ebene9'));
    expect(x('Ebene60') - x('Ebene1')).toBeLessThanOrEqual(8 * 16);
    expect(CONTENT_RIGHT - x('Tief')).toBeGreaterThan(300);
  });
});
