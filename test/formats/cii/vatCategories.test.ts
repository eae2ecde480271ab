/**
 * The stored VAT category in the e-invoices (issue 27): one breakdown group per category (and rate
 * for S), BT-120 from the statutory wording plus the lines' notes, BT-121 only when every line of
 * the group has the same VATEX code; and our checker's rules for K, G and O (BR-IC-*, BR-G-*, BR-O-*).
 */
import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import type { DocumentInput, InvoiceItemView } from '../../../shared/domain/invoiceView';
import { buildCiiXml } from '../../../shared/formats/cii/ciiInvoice';
import { EInvoiceExportError } from '../../../shared/formats/cii/einvoiceModel';
import { checkEn16931 } from '../../../shared/formats/cii/en16931Rules';
import { buildEbInterfaceXml } from '../../../shared/formats/ebinterface/ebInterfaceInvoice';
import { needsOfficialFiles } from '../../helpers/officialFiles';
import { validateXml } from '../../helpers/xmllint';
import { CII_XSD, CII_XSD_FILE, type Customer, customerAT, customerDE, EBI_XSD, EBI_XSD_FILE, makeDocument, sellerAT, sellerDE } from './fixtures';

const official = needsOfficialFiles([CII_XSD_FILE, EBI_XSD_FILE]);

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any
const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', removeNSPrefix: true, parseTagValue: false });
const asArray = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
const groupsOf = (xml: string): Any[] =>
  asArray(parser.parse(xml).CrossIndustryInvoice.SupplyChainTradeTransaction.ApplicableHeaderTradeSettlement.ApplicableTradeTax);
const rules = (xml: string) => new Set(checkEn16931(xml).map((v) => v.rule));

type Vat = Pick<InvoiceItemView, 'taxCategory' | 'exemptionReason' | 'exemptionNote'>;

/** A document whose lines (description, rate) carry the given stored categories. */
function doc(seller: typeof sellerAT, customer: Customer, lines: Array<[string, Vat]>): DocumentInput {
  const input = makeDocument(seller, customer, {
    itemSpecs: lines.map(([rate], i) => ({ description: `Position ${i + 1}`, quantity: '1', unitPrice: `${100 * (i + 1)}.00`, taxRate: rate })),
  });
  input.invoice.items = input.invoice.items.map((item, i) => ({ exemptionReason: null, exemptionNote: null, ...item, ...lines[i][1] }));
  return input;
}

const swiss: Customer = { ...customerAT, vatId: null, address: 'Bahnhofstrasse 1\n8001 Zürich', country: 'CH' };

describe('CII: stored VAT categories', () => {
  it('one E group for lines with different exemption reasons: every wording and note in BT-120, no BT-121 when the codes differ', () => {
    const xml = buildCiiXml(
      doc(sellerAT, customerAT, [
        ['20', { taxCategory: 'standard' }],
        ['0', { taxCategory: 'exempt', exemptionReason: 'AT-6-1-19', exemptionNote: 'Befund vom 3. März' }],
        ['0', { taxCategory: 'exempt', exemptionReason: 'AT-6-1-16' }],
      ]),
    );
    expect(checkEn16931(xml)).toEqual([]);
    if (official) expect(validateXml(xml, CII_XSD).errors).toBe('');
    const [s, e] = groupsOf(xml);
    expect(s).toMatchObject({ CategoryCode: 'S', RateApplicablePercent: '20', CalculatedAmount: '20.00' });
    expect(s.ExemptionReason).toBeUndefined();
    expect(e).toMatchObject({ CategoryCode: 'E', BasisAmount: '500.00', CalculatedAmount: '0.00' });
    expect(e.ExemptionReason).toBe(
      'Heilbehandlung als Arzt, Zahnarzt, Psychotherapeut oder Hebamme: steuerfrei gemäß § 6 Abs. 1 Z 19 UStG 1994. ' +
        'Vermietung und Verpachtung von Grundstücken: steuerfrei gemäß § 6 Abs. 1 Z 16 UStG 1994. Befund vom 3. März',
    );
    expect(e.ExemptionReasonCode).toBeUndefined();
  });

  it('BT-121 when every exempt line has the same VATEX code; the document notes repeat the wording', () => {
    const xml = buildCiiXml(
      doc(sellerDE, customerDE, [
        ['0', { taxCategory: 'exempt', exemptionReason: 'DE-4-14a' }],
        ['0', { taxCategory: 'exempt', exemptionReason: 'DE-4-14a' }],
      ]),
    );
    expect(checkEn16931(xml)).toEqual([]);
    const [e] = groupsOf(xml);
    expect(e.ExemptionReasonCode).toBe('VATEX-EU-132-1C');
    expect(xml).toContain(
      '<ram:Content>Heilbehandlung als Arzt, Zahnarzt, Heilpraktiker oder ähnlicher Heilberuf: steuerfrei gemäß § 4 Nr. 14 Buchst. a UStG.</ram:Content>',
    );
  });

  it('a 0 % row of several categories splits into one group per category', () => {
    const xml = buildCiiXml(
      doc(sellerDE, customerDE, [
        ['0', { taxCategory: 'zeroRated' }],
        ['0', { taxCategory: 'exempt', exemptionReason: 'DE-4-12' }],
      ]),
    );
    expect(checkEn16931(xml)).toEqual([]);
    expect(groupsOf(xml).map((g) => [g.CategoryCode, g.BasisAmount, g.ExemptionReason])).toEqual([
      ['Z', '100.00', undefined],
      ['E', '200.00', 'Vermietung und Verpachtung von Grundstücken: steuerfrei gemäß § 4 Nr. 12 UStG.'],
    ]);
  });

  it('export (G) to a buyer outside the EU with VATEX-EU-G and the export wording', () => {
    const xml = buildCiiXml(doc(sellerAT, swiss, [['0', { taxCategory: 'export' }]]));
    expect(checkEn16931(xml)).toEqual([]);
    expect(groupsOf(xml)[0]).toMatchObject({
      CategoryCode: 'G',
      ExemptionReason: 'Steuerfreie Ausfuhrlieferung (§ 6 Abs. 1 Z 1 i. V. m. § 7 UStG 1994).',
      ExemptionReasonCode: 'VATEX-EU-G',
    });
  });

  it('a document without stored categories keeps the inference: 0 % to a Swiss buyer is still Z there', () => {
    const input = makeDocument(sellerAT, swiss, { itemSpecs: [{ description: 'x', quantity: '1', unitPrice: '10.00', taxRate: '0' }] });
    expect(groupsOf(buildCiiXml(input))[0].CategoryCode).toBe('Z');
  });

  it('intra-Community supply (K): deliver-to country, both VAT IDs', () => {
    const xml = buildCiiXml(doc(sellerAT, customerDE, [['0', { taxCategory: 'intraCommunitySupply' }]]));
    expect(checkEn16931(xml)).toEqual([]);
    if (official) expect(validateXml(xml, CII_XSD).errors).toBe('');
    expect(xml).toMatch(/<ram:ShipToTradeParty>\s*<ram:Name>Kunden AG Mitte<\/ram:Name>\s*<ram:PostalTradeAddress>\s*<ram:CountryID>DE<\/ram:CountryID>/);
    expect(groupsOf(xml)[0]).toMatchObject({ CategoryCode: 'K', ExemptionReasonCode: 'VATEX-EU-IC' });
  });

  it('not subject to VAT (O): no rate, no VAT identifiers, the seller named by BT-29', () => {
    const xml = buildCiiXml(doc(sellerAT, swiss, [['0', { taxCategory: 'notSubject' }]]));
    expect(checkEn16931(xml)).toEqual([]);
    if (official) expect(validateXml(xml, CII_XSD).errors).toBe('');
    expect(xml).not.toContain('schemeID="VA"');
    expect(xml).toContain('<ram:ID>ATU12345678</ram:ID>');
    expect(groupsOf(xml)[0].RateApplicablePercent).toBeUndefined();
  });

  it('refuses O mixed with another category (BR-O-11): such an invoice exists as a PDF only', () => {
    const input = doc(sellerAT, swiss, [
      ['20', { taxCategory: 'standard' }],
      ['0', { taxCategory: 'notSubject' }],
    ]);
    expect(() => buildCiiXml(input)).toThrow(EInvoiceExportError);
    expect(() => buildCiiXml(input)).toThrow(/BR-O-11/);
  });
});

describe('EN 16931 checker: K, G and O rules', () => {
  const k = () => buildCiiXml(doc(sellerAT, customerDE, [['0', { taxCategory: 'intraCommunitySupply' }]]));
  const g = () => buildCiiXml(doc(sellerAT, swiss, [['0', { taxCategory: 'export' }]]));
  const o = () => buildCiiXml(doc(sellerAT, swiss, [['0', { taxCategory: 'notSubject' }]]));
  const noReason = (xml: string) =>
    xml.replace(/\s*<ram:ExemptionReason>[^<]*<\/ram:ExemptionReason>/g, '').replace(/\s*<ram:ExemptionReasonCode>[^<]*<\/ram:ExemptionReasonCode>/g, '');

  it('BR-IC-02/10/11/12', () => {
    expect(rules(k().replace(/\s*<ram:ShipToTradeParty>[\s\S]*?<\/ram:ShipToTradeParty>/, ''))).toEqual(new Set(['BR-IC-12']));
    expect(rules(k().replace(/<ram:SpecifiedTaxRegistration>\s*<ram:ID schemeID="VA">DE136695976<\/ram:ID>\s*<\/ram:SpecifiedTaxRegistration>/, ''))).toContain(
      'BR-IC-02',
    );
    expect(rules(noReason(k()))).toEqual(new Set(['BR-IC-10']));
    expect(rules(k().replace(/\s*<ram:ActualDeliverySupplyChainEvent>[\s\S]*?<\/ram:ActualDeliverySupplyChainEvent>/, ''))).toEqual(new Set(['BR-IC-11']));
    expect(rules(k().replace(/(<ram:CategoryCode>K<\/ram:CategoryCode>\s*<ram:RateApplicablePercent>)0</, '$120<'))).toContain('BR-IC-05');
  });

  it('BR-G-02/05/10', () => {
    // Without its VAT ID the seller is not identified either (BR-CO-26).
    expect(rules(g().replace(/<ram:SpecifiedTaxRegistration>\s*<ram:ID schemeID="VA">ATU12345678<\/ram:ID>\s*<\/ram:SpecifiedTaxRegistration>/, ''))).toContain(
      'BR-G-02',
    );
    expect(rules(noReason(g()))).toEqual(new Set(['BR-G-10']));
    expect(rules(g().replace(/(<ram:CategoryCode>G<\/ram:CategoryCode>\s*<ram:RateApplicablePercent>)0</, '$120<'))).toContain('BR-G-05');
  });

  it('BR-O-02/05/10/11/12', () => {
    const withVa = o().replace(
      '</ram:SellerTradeParty>',
      '<ram:SpecifiedTaxRegistration><ram:ID schemeID="VA">ATU12345678</ram:ID></ram:SpecifiedTaxRegistration></ram:SellerTradeParty>',
    );
    expect(rules(withVa)).toEqual(new Set(['BR-O-02']));
    const withRate = o().replace(
      /(<ram:SpecifiedLineTradeSettlement>\s*<ram:ApplicableTradeTax>[\s\S]*?<ram:CategoryCode>O<\/ram:CategoryCode>)/,
      '$1<ram:RateApplicablePercent>0</ram:RateApplicablePercent>',
    );
    expect(rules(withRate)).toEqual(new Set(['BR-O-05']));
    expect(rules(noReason(o()))).toEqual(new Set(['BR-O-10']));
    // A line of another category beside the O group.
    expect(
      rules(
        o().replace('<ram:CategoryCode>O</ram:CategoryCode>', '<ram:CategoryCode>S</ram:CategoryCode><ram:RateApplicablePercent>0</ram:RateApplicablePercent>'),
      ),
    ).toContain('BR-O-12');
  });

  it('BR-IC-01, BR-G-01, BR-O-01: exactly one group of the category', () => {
    const twice = (xml: string, cat: string) => {
      const group = new RegExp(
        `<ram:ApplicableTradeTax>\\s*<ram:CalculatedAmount>[\\s\\S]*?<ram:CategoryCode>${cat}</ram:CategoryCode>[\\s\\S]*?</ram:ApplicableTradeTax>`,
      ).exec(xml)![0];
      return xml.replace(group, group + group);
    };
    expect(rules(twice(k(), 'K'))).toContain('BR-IC-01');
    expect(rules(twice(g(), 'G'))).toContain('BR-G-01');
    const o2 = rules(twice(o(), 'O'));
    expect(o2).toContain('BR-O-01');
  });
});

describe.skipIf(!official)('ebInterface: stored VAT categories', () => {
  it('writes the category per line and group with the wording as comment, valid against the XSD', () => {
    const xml = buildEbInterfaceXml(
      doc(sellerAT, customerDE, [
        ['20', { taxCategory: 'standard' }],
        ['0', { taxCategory: 'intraCommunitySupply', exemptionNote: 'Lieferung per Spedition' }],
      ]),
    );
    expect(validateXml(xml, EBI_XSD).errors).toBe('');
    const inv = parser.parse(xml).Invoice;
    const items = asArray(inv.Tax.TaxItem);
    expect(items.map((t: Any) => t.TaxPercent['@_TaxCategoryCode'])).toEqual(['S', 'K']);
    expect(items[1].Comment).toBe('Steuerfreie innergemeinschaftliche Lieferung (Art. 6 Abs. 1 i. V. m. Art. 7 UStG 1994). Lieferung per Spedition');
    expect(asArray(inv.Details.ItemList.ListLineItem)[1].TaxItem.Comment).toBe(items[1].Comment);
  });

  it('an intra-Community supply needs both UIDs (EBI-IC)', () => {
    const input = doc({ ...sellerAT, vatId: null }, customerDE, [['0', { taxCategory: 'intraCommunitySupply' }]]);
    try {
      buildEbInterfaceXml(input);
      throw new Error('expected a refusal');
    } catch (e) {
      expect(e).toBeInstanceOf(EInvoiceExportError);
      expect((e as EInvoiceExportError).violations.map((v) => v.rule)).toContain('EBI-IC');
    }
  });
});
