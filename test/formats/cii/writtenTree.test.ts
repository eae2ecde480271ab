/**
 * The EN 16931 checks run on the tree of the document being written (writtenTree) instead of on
 * its XML parsed again; that tree must be the parser's, value for value, or the check falls back
 * to parsing (shared/formats/cii/rules/writtenTree.ts). Compared on random invoices (CII and
 * XRechnung), on hand-made elements with every awkward value, and on the findings themselves.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildCiiDocument } from '../../../shared/formats/cii/ciiInvoice';
import { toEInvoiceModel } from '../../../shared/formats/cii/einvoiceModel';
import { checkEn16931, checkEn16931Document } from '../../../shared/formats/cii/en16931Rules';
import { writtenTree } from '../../../shared/formats/cii/rules/writtenTree';
import { parseForRules } from '../../../shared/formats/cii/rules/xmlNodes';
import { el, renderXml, type XmlElement } from '../../../shared/formats/xml';
import { customerAT, documentArb, makeDocument, mixedItemsAT, negateAmounts, sellerAT } from './fixtures';

const parsed = (root: XmlElement) => {
  const read = parseForRules(renderXml(root));
  if (!('tree' in read)) throw new Error(read.notWellFormed);
  return read.tree;
};

/** Every value of the document, so a random one can be swapped to break rules. */
function leaves(root: XmlElement): Array<{ element: XmlElement; index: number }> {
  const out: Array<{ element: XmlElement; index: number }> = [];
  const walk = (e: XmlElement) =>
    e.children.forEach((c, index) => {
      if (typeof c === 'string') out.push({ element: e, index });
      else walk(c);
    });
  walk(root);
  return out;
}

describe('writtenTree', () => {
  it('is the parsed tree of every random invoice and credit note, CII and XRechnung, or null only for a CR in text', () => {
    let modelled = 0;
    fc.assert(
      fc.property(documentArb, fc.constantFrom('en16931' as const, 'xrechnung' as const), (input, profile) => {
        const root = buildCiiDocument(toEInvoiceModel(input), profile);
        const tree = writtenTree(root);
        if (tree === null) {
          expect(renderXml(root)).toContain('&#xD;');
          return;
        }
        modelled++;
        expect(tree).toEqual(parsed(root));
      }),
      { numRuns: 300 },
    );
    expect(modelled).toBeGreaterThan(100);
  });

  it('values with markup characters, entities, quotes, surrounding and inner whitespace, forbidden characters, prefixes, empty elements', () => {
    const values = [
      '',
      ' ',
      '  a  ',
      'Müller & Söhne',
      '<b>"x"</b> \'y\'',
      '&amp; &lt; &#65; &#xD;',
      ']]>',
      '\u00A0nbsp\u00A0',
      '\u2028ls\u2029',
      'a\nb',
      '\u0085x\u0085',
      'ctl\u0001\u000B\uFFFE\uD800 end',
      'tab\tinside',
      '\u3000ideo\u3000',
    ];
    for (const v of values) {
      const root = el(
        'rsm:CrossIndustryInvoice',
        { 'xmlns:rsm': 'urn:x', 'xmlns:ram': 'urn:y', 'xsi:schemaLocation': 'urn:z' },
        el('ram:Text', v),
        el('ram:TwoTexts', v, v),
        el('ram:Empty'),
        el('ram:WithAttr', { schemeID: v.replace(/[\t\n\r]/g, '') }),
        el('ram:Nested', el('ram:A', '1'), el('Local', v), el('ram:A', { x: '2' }, v)),
      );
      expect(writtenTree(root), JSON.stringify(v)).toEqual(parsed(root));
    }
  });

  it('leaves to the parser what it does not model: CR in text; TAB, LF, CR in an attribute', () => {
    expect(writtenTree(el('r', el('a', 'x\ry')))).toBeNull();
    for (const v of ['a\tb', 'a\nb', 'a\rb']) expect(writtenTree(el('r', el('a', { id: v }, 'x')))).toBeNull();
  });
});

describe('checkEn16931Document', () => {
  it('finds what checkEn16931 finds in the rendered XML: the same rule ids and messages, also for broken documents and for ones it falls back on', () => {
    const inputs = [makeDocument(sellerAT, customerAT, { itemSpecs: mixedItemsAT }), negateAmounts(makeDocument(sellerAT, customerAT))];
    let seed = 11;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    let broken = 0;
    for (const input of inputs) {
      const root = buildCiiDocument(toEInvoiceModel(input));
      expect(checkEn16931Document(root)).toEqual([]);
      const values = leaves(root);
      for (let i = 0; i < 150; i++) {
        // Swap two values (amounts, codes, dates, ids): most swaps break one rule or several.
        const a = values[next(values.length)];
        const b = values[next(values.length)];
        const [va, vb] = [a.element.children[a.index], b.element.children[b.index]];
        (a.element.children as string[])[a.index] = vb as string;
        (b.element.children as string[])[b.index] = i % 10 === 0 ? `${va}\r` : (va as string);
        const findings = checkEn16931Document(root);
        expect(findings).toEqual(checkEn16931(renderXml(root)));
        if (findings.length) broken++;
        (a.element.children as string[])[a.index] = va as string;
        (b.element.children as string[])[b.index] = vb as string;
      }
    }
    expect(broken).toBeGreaterThan(50);
  });
});
