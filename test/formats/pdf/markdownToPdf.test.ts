import { describe, expect, it } from 'vitest';
import { createDocument, toBuffer } from '../../../shared/formats/pdf/layout';
import { renderMarkdown } from '../../../shared/formats/pdf/markdownToPdf';
import { fonts, pageContents, pageTexts } from './pdfTools';

async function render(markdown: string): Promise<Buffer> {
  const doc = createDocument(
    { title: 'Markdown', author: 'Test', subject: 'Test', date: new Date('2026-01-01T00:00:00Z') },
    false,
  );
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
});
