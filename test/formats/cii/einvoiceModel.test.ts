import Decimal from 'decimal.js';
import { describe, expect, it } from 'vitest';
import { isIntraEuReverseCharge, parsePostalAddress, toEInvoiceModel, unitCode, vatCategoryFor } from '../../../shared/formats/cii/einvoiceModel';
import { el, escapeAttr, escapeText, renderXml } from '../../../shared/formats/xml';
import { customerAT, customerDE, customerPrivate, makeDocument, negateAmounts, sellerAT, sellerDE } from './fixtures';

describe('parsePostalAddress', () => {
  const parse = (raw: string | null, extra: Partial<Parameters<typeof parsePostalAddress>[1]> = {}) =>
    parsePostalAddress(raw, { fallbackCountry: 'AT', ...extra });

  it.each([
    ['Mariahilfer Straße 12/3\n1060 Wien', { lines: ['Mariahilfer Straße 12/3'], postcode: '1060', city: 'Wien', country: 'AT' }],
    ['Hauptplatz 1, A-8010 Graz', { lines: ['Hauptplatz 1'], postcode: '8010', city: 'Graz', country: 'AT' }],
    ['Lieferantenstraße 20, 80333 München, Deutschland', { lines: ['Lieferantenstraße 20'], postcode: '80333', city: 'München', country: 'DE' }],
    ['Musterweg 5\r\nD-10115 Berlin', { lines: ['Musterweg 5'], postcode: '10115', city: 'Berlin', country: 'DE' }],
    [
      'z. Hd. Buchhaltung\nBahnhofstrasse 1\n8001 Zürich\nCH',
      { lines: ['Bahnhofstrasse 1', 'z. Hd. Buchhaltung'], postcode: '8001', city: 'Zürich', country: 'CH' },
    ],
    ['1010 Wien', { lines: [], postcode: '1010', city: 'Wien', country: 'AT' }],
    ['Postfach 12', { lines: ['Postfach 12'], postcode: null, city: null, country: 'AT' }],
    ['  Ring 3 ,, 4020   Linz an der Donau  ', { lines: ['Ring 3'], postcode: '4020', city: 'Linz an der Donau', country: 'AT' }],
  ])('%j', (raw, expected) => {
    expect(parse(raw)).toEqual(expected);
  });

  it('drops a first line repeating the party name', () => {
    expect(parse('Anna Gruber\nLinzer Gasse 5\n5020 Salzburg', { partyNames: ['Anna Gruber'] }).lines).toEqual(['Linzer Gasse 5']);
  });

  it('country precedence: explicit country, address, VAT id prefix, fallback', () => {
    expect(parse('Hauptstr. 1, 80331 München, Deutschland', { country: 'AT' }).country).toBe('AT');
    expect(parse('Hauptstr. 1, 80331 München, Deutschland', { vatId: 'ATU1' }).country).toBe('DE');
    expect(parse('Hauptstr. 1, 80331 München', { vatId: 'DE123456789' }).country).toBe('DE');
    expect(parse('Odos 1, 10552 Athen', { vatId: 'EL123456789' }).country).toBe('GR');
    expect(parse(null, { fallbackCountry: 'DE' })).toEqual({ lines: [], postcode: null, city: null, country: 'DE' });
  });
});

describe('unitCode', () => {
  it.each([
    ['Stk', 'H87'],
    ['Stück', 'H87'],
    ['stk.', 'H87'],
    ['Std', 'HUR'],
    ['h', 'HUR'],
    ['Stunden', 'HUR'],
    ['Tag', 'DAY'],
    ['Tage', 'DAY'],
    ['km', 'KMT'],
    ['kg', 'KGM'],
    ['pauschal', 'LS'],
    ['Pauschale', 'LS'],
    ['m²', 'MTK'],
    ['Monat', 'MON'],
    ['HUR', 'HUR'],
    ['Kiste', 'C62'],
    ['', 'C62'],
    [null, 'C62'],
  ])('%s → %s', (unit, code) => {
    expect(unitCode(unit)).toBe(code);
  });
});

describe('VAT category', () => {
  it('reverse charge needs a VAT id of another EU country', () => {
    expect(isIntraEuReverseCharge(sellerAT, customerDE)).toBe(true);
    expect(isIntraEuReverseCharge(sellerAT, customerAT)).toBe(false);
    expect(isIntraEuReverseCharge(sellerAT, customerPrivate)).toBe(false);
    expect(isIntraEuReverseCharge(sellerDE, customerAT)).toBe(true);
    expect(isIntraEuReverseCharge(sellerAT, { ...customerDE, vatId: 'CHE-123.456.789' })).toBe(false);
    expect(isIntraEuReverseCharge(sellerAT, { ...customerDE, vatId: 'de 136 695 976' })).toBe(true);
  });

  it('S for positive rates, AE/Z for 0 %, negative rates are refused', () => {
    expect(vatCategoryFor(new Decimal('20'), true)).toBe('S');
    expect(vatCategoryFor(new Decimal('0'), true)).toBe('AE');
    expect(vatCategoryFor(new Decimal('0.00'), false)).toBe('Z');
    expect(() => vatCategoryFor(new Decimal('-1'), false)).toThrow(/Negative/);
  });
});

describe('toEInvoiceModel', () => {
  it('turns a negative credit note into a positive one and keeps prices non-negative', () => {
    const input = negateAmounts(makeDocument(sellerAT, customerAT, { type: 'gutschrift', number: 'GS-1', relatedInvoiceNumber: 'RE-1' }));
    const m = toEInvoiceModel(input);
    expect(m.kind).toBe('creditNote');
    expect(m.totals.gross.toFixed(2)).toBe('240.00');
    expect(m.lines[0].quantity.toString()).toBe('2');
    expect(m.lines[0].unitPrice.toFixed(2)).toBe('100.00');
    expect(m.lines[0].netAmount.toFixed(2)).toBe('200.00');
    expect(m.relatedInvoiceNumber).toBe('RE-1');
  });

  it('sorts lines by position and splits long descriptions into name and description', () => {
    const input = makeDocument(sellerAT, customerAT, {
      itemSpecs: [
        { description: 'B\nmore', quantity: '1', unitPrice: '1.00', taxRate: '20' },
        { description: 'A', quantity: '1', unitPrice: '1.00', taxRate: '20' },
      ],
    });
    input.invoice.items[0].position = 2;
    input.invoice.items[1].position = 1;
    const m = toEInvoiceModel(input);
    expect(m.lines.map((l) => [l.position, l.name, l.description])).toEqual([
      [1, 'A', null],
      [2, 'B', 'B\nmore'],
    ]);
  });

  it('rejects malformed amounts and dates with a clear message', () => {
    const a = makeDocument(sellerAT, customerAT);
    a.invoice.items[0].netAmount = '12,50';
    expect(() => toEInvoiceModel(a)).toThrow(/items\[0\]\.netAmount is not a decimal/);
    const b = makeDocument(sellerAT, customerAT, { issueDate: '2026-02-30' });
    expect(() => toEInvoiceModel(b)).toThrow(/issueDate is not a valid date/);
    const c = makeDocument(sellerAT, customerAT, { issueDate: '10.03.2026' });
    expect(() => toEInvoiceModel(c)).toThrow(/issueDate is not a valid date/);
  });
});

describe('xml helpers', () => {
  it('escapes text and attributes', () => {
    expect(escapeText(`a & b < c > d "e" 'f'`)).toBe(`a &amp; b &lt; c &gt; d "e" 'f'`);
    expect(escapeAttr(`a & b < c > d "e" 'f'\n`)).toBe('a &amp; b &lt; c &gt; d &quot;e&quot; &apos;f&apos;&#xA;');
  });

  it('renders trees, skipping empty optional children, and rejects bad names', () => {
    const xml = renderXml(el('a', { x: '1&2', y: undefined }, el('b', 'text'), null, false, [el('c')]));
    expect(xml).toBe('<?xml version="1.0" encoding="UTF-8"?>\n<a x="1&amp;2">\n  <b>text</b>\n  <c/>\n</a>\n');
    expect(() => el('a b')).toThrow(/Invalid XML name/);
    expect(() => el('a', { 'on"x': '1' })).toThrow(/Invalid XML name/);
    expect(() => renderXml(el('a', 'text', el('b')))).toThrow(/Mixed content/);
  });
});
