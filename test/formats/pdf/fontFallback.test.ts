/**
 * Every character a user can type renders: text DejaVu has no glyphs for (Chinese, Japanese,
 * Korean) is drawn in the Noto fallback, embedded, measured with that font's widths, so no
 * glyph is .notdef and no words overlap. And the fonts parsed once per process (with their
 * glyph data for subsets and shaped words kept for the process) give the same document as
 * pdfkit parsing them per document (docs/pdf-and-zugferd.md, "Fonts").
 */
import { describe, expect, it } from 'vitest';
import { fontSharing } from '../../../shared/formats/pdf/fonts';
import { renderDocument } from '../../../shared/documents/renderDocument';
import { makeDocumentInput, manyItems } from './fixtures';
import { allText, fonts, type WordBox, wordBoxes } from './pdfTools';

const SAMPLES = {
  zh: {
    customer: { company: '北京星辰科技有限公司', name: '王小明', address: '北京市朝阳区建国路 88 号\n100022 北京' },
    items: ['软件许可证（年度）技术支持服务', '数据迁移与培训北京星辰科技有限公司定制开发项目第二阶段验收'],
  },
  ja: {
    customer: { company: '株式会社テスト商事', name: '山田太郎', address: '東京都千代田区丸の内 1-1\n100-0005 東京' },
    items: ['ソフトウェアのライセンス（年間）', 'データ移行とトレーニング、カスタム開発プロジェクト第二段階の検収'],
  },
  ko: {
    customer: { company: '삼성테스트 주식회사', name: '김민준', address: '서울특별시 강남구 테헤란로 123\n06234 서울' },
    items: ['소프트웨어 라이선스 (연간)', '데이터 마이그레이션 및 교육, 맞춤형 개발 프로젝트 2단계 검수'],
  },
} as const;

function input(lang: keyof typeof SAMPLES) {
  const s = SAMPLES[lang];
  return makeDocumentInput({
    customer: s.customer,
    // Contact and buyer reference make it a valid e-invoice, so ZUGFeRD renders too.
    seller: { contactName: 'Buchhaltung', contactPhone: '+43 1 234 56 78', contactEmail: 'buchhaltung@example.at' },
    invoice: { buyerReference: 'KST-4711' },
    items: [
      { description: s.items[0], quantity: '2', unit: '個', unitPrice: '120.00', taxRate: '20' },
      { description: s.items[1], quantity: '1', unit: 'Stk', unitPrice: '990.00', taxRate: '20' },
      { description: 'Beratung', quantity: '3', unit: 'Std', unitPrice: '80.00', taxRate: '20' },
    ],
  });
}

/**
 * Two words overlap when their boxes share width and more than a quarter of the lower one's
 * height. pdftotext's box spans the font's ascent to descent, and Noto's (1.45 em) is taller
 * than DejaVu's line height (1.16 em), so boxes of stacked CJK lines touch by ~0.3 em where the
 * ideographs themselves (0.88 to −0.12 em) do not; a glyph drawn over another overlaps fully.
 */
const intersects = (a: WordBox, b: WordBox, eps = 0.3) => {
  const dy = Math.min(a.yMax, b.yMax) - Math.max(a.yMin, b.yMin);
  return a.xMin < b.xMax - eps && b.xMin < a.xMax - eps && dy > 0.25 * Math.min(a.yMax - a.yMin, b.yMax - b.yMin);
};

describe('characters DejaVu lacks (CJK)', () => {
  for (const lang of Object.keys(SAMPLES) as Array<keyof typeof SAMPLES>) {
    for (const kind of ['pdf', 'zugferd'] as const) {
      it(`${lang} ${kind}: every character is extracted, every font embedded, no words overlap`, async () => {
        const doc = input(lang);
        const pdf = await renderDocument(kind, doc);

        const used = fonts(pdf);
        expect(used.length).toBeGreaterThan(0);
        for (const f of used) expect(f, f.name).toMatchObject({ embedded: true });
        expect(used.some((f) => f.name.includes('NotoSans'))).toBe(true);

        // A .notdef glyph extracts as nothing (or U+FFFD): every typed character must come back.
        const text = allText(pdf).replace(/\s+/g, '');
        expect(text).not.toContain('\uFFFD');
        const s = SAMPLES[lang];
        for (const field of [s.customer.company, s.customer.name, s.customer.address, ...s.items]) {
          for (const ch of field.replace(/\s+/g, '')) expect(text, `${ch} of ${field}`).toContain(ch);
        }

        // No two words of a page overlap: the layout measured each run with the font drawing it.
        for (const page of wordBoxes(pdf)) {
          for (let i = 0; i < page.length; i++) {
            for (let j = i + 1; j < page.length; j++) {
              if (intersects(page[i], page[j])) throw new Error(`"${page[i].text}" overlaps "${page[j].text}": ${JSON.stringify([page[i], page[j]])}`);
            }
          }
        }
      });
    }
  }

  it('Arabic, Hebrew and emoji DejaVu has: every character is extracted, no words overlap', async () => {
    const company = 'شركة النور للتجارة';
    const name = 'חברת אור בע״מ 😀 ✓';
    const item = 'خدمات استشارية — ייעוץ';
    const pdf = await renderDocument(
      'pdf',
      makeDocumentInput({
        customer: { company, name },
        items: [{ description: item, quantity: '1', unit: 'Stk', unitPrice: '10.00', taxRate: '20' }],
      }),
    );
    for (const f of fonts(pdf)) expect(f, f.name).toMatchObject({ embedded: true });
    const text = allText(pdf).replace(/\s+/g, '');
    for (const ch of `${company}${name}${item}`.replace(/\s+/g, '')) expect(text, ch).toContain(ch);
    for (const page of wordBoxes(pdf)) {
      for (let i = 0; i < page.length; i++) {
        for (let j = i + 1; j < page.length; j++) expect(intersects(page[i], page[j]), `${page[i].text} / ${page[j].text}`).toBe(false);
      }
    }
  });

  it('characters no font has (Thai) are .notdef boxes whose width in /W is the width they were laid out with', async () => {
    const pdf = await renderDocument(
      'pdf',
      makeDocumentInput({
        customer: { company: 'บริษัทไทยจำกัดมหาชนบริการให้คำปรึกษา' },
        items: [{ description: 'บริการให้คำปรึกษาบริการให้คำปรึกษาบริการ', quantity: '1', unit: 'Stk', unitPrice: '10.00', taxRate: '20' }],
      }),
    );
    // pdfkit 0.20 wrote the .notdef width in font units (1229 for DejaVu) where the layout used
    // 600 per 1000: viewers drew each box twice as wide, over the next column. pdftotext gives
    // .notdef no word box, so the width is read from the font dictionaries (not compressed).
    const first = [...pdf.toString('latin1').matchAll(/\/W \[\s*0\s*\[\s*([\d.]+)/g)].map((m) => Number(m[1]));
    expect(first.length).toBeGreaterThan(0);
    for (const w of first) expect(w).toBeLessThanOrEqual(1000);
    expect(first[0]).toBeCloseTo(600, 0);
  });

  it('a document without such characters embeds no fallback font', async () => {
    const pdf = await renderDocument('pdf', makeDocumentInput());
    expect(
      fonts(pdf)
        .map((f) => f.name.replace(/^[A-Z]{6}\+/, ''))
        .sort(),
    ).toEqual(['DejaVuSans', 'DejaVuSans-Bold']);
  });
});

describe('fonts parsed once per process', () => {
  const cases = {
    'the default invoice': makeDocumentInput(),
    '10 items': makeDocumentInput({ items: manyItems(10) }),
    '60 items (pages)': makeDocumentInput({ items: manyItems(60) }),
    'a draft': makeDocumentInput({ invoice: { status: 'entwurf', number: null } }),
    'a Japanese customer': input('ja'),
    'a Korean customer': input('ko'),
  };
  const runs = [
    ...Object.entries(cases).map(([name, doc]) => ({ name, doc, kind: 'pdf' as const })),
    { name: 'ZUGFeRD of the default invoice', doc: makeDocumentInput(), kind: 'zugferd' as const },
    { name: 'ZUGFeRD of a Korean customer', doc: input('ko'), kind: 'zugferd' as const },
  ];
  for (const { name, doc, kind } of runs) {
    it(`${name}: the same text, word boxes and bytes as with the fonts parsed per document`, async () => {
      // Render twice first so the shared font objects carry state (glyph data, layout caches) from other documents.
      await renderDocument('pdf', input('zh'));
      await renderDocument('zugferd', input('ja'));
      const shared = await renderDocument(kind, doc);
      fontSharing.enabled = false;
      let perDocument: Buffer;
      try {
        perDocument = await renderDocument(kind, doc);
      } finally {
        fontSharing.enabled = true;
      }
      expect(allText(shared)).toBe(allText(perDocument));
      expect(wordBoxes(shared)).toEqual(wordBoxes(perDocument));
      // Stronger still: the same bytes, so cached and golden copies stay comparable.
      expect(shared.equals(perDocument)).toBe(true);
    });
  }
});
