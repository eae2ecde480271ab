import { describe, expect, it } from 'vitest';
import {
  checkTaxCategory,
  EXEMPTION_REASONS,
  exemptionReason,
  fittingZeroCategories,
  inferTaxCategory,
  type LineTaxFacts,
  smallBusinessReason,
  TAX_CATEGORIES,
  UNTDID_5305,
} from '../../shared/domain/tax/vatCategory';

const at = (over: Partial<LineTaxFacts> = {}): LineTaxFacts => ({
  sellerCountry: 'AT',
  sellerVatId: 'ATU12345678',
  buyerCountry: 'AT',
  buyerVatId: null,
  taxRate: '20',
  smallBusiness: false,
  ...over,
});

describe('VAT category of a line', () => {
  it('maps every category to its UNTDID 5305 code', () => {
    expect(TAX_CATEGORIES.map((c) => UNTDID_5305[c])).toEqual(['S', 'Z', 'E', 'AE', 'K', 'G', 'O']);
  });

  it('infers as before: positive rate standard, 0 % to another member state reverse charge, outside the EU export', () => {
    expect(inferTaxCategory(at())).toBe('standard');
    expect(inferTaxCategory(at({ taxRate: '0', buyerCountry: 'DE', buyerVatId: 'DE123456789' }))).toBe('reverseCharge');
    expect(inferTaxCategory(at({ taxRate: '0', buyerCountry: 'CH', buyerVatId: null }))).toBe('export');
    expect(inferTaxCategory(at({ taxRate: '0' }))).toBeNull();
    // A domestic VAT ID is no reason for reverse charge.
    expect(inferTaxCategory(at({ taxRate: '0', buyerVatId: 'ATU87654321' }))).toBeNull();
  });

  it('makes every line of a small business exempt', () => {
    expect(inferTaxCategory(at({ smallBusiness: true, taxRate: '0' }))).toBe('exempt');
    expect(smallBusinessReason('AT').legalBasis).toBe('§ 6 Abs. 1 Z 27 UStG 1994');
    expect(smallBusinessReason('DE').legalBasis).toBe('§ 19 Abs. 1 UStG');
  });

  it('checks a stated category against the facts and names the field', () => {
    expect(checkTaxCategory('standard', null, at())).toBeNull();
    expect(checkTaxCategory('standard', null, at({ taxRate: '0' }))?.field).toBe('taxRate');
    expect(checkTaxCategory('export', null, at())?.field).toBe('taxRate');
    expect(checkTaxCategory('intraCommunitySupply', null, at({ taxRate: '0', buyerVatId: 'DE123456789', buyerCountry: 'DE' }))).toBeNull();
    expect(checkTaxCategory('intraCommunitySupply', null, at({ taxRate: '0', buyerCountry: 'DE' }))?.message).toMatch(/buyer's VAT ID/);
    expect(checkTaxCategory('reverseCharge', null, at({ taxRate: '0', sellerVatId: null, buyerVatId: 'DE123456789' }))?.message).toMatch(/seller's VAT ID/);
    expect(checkTaxCategory('exempt', null, at({ taxRate: '0' }))?.field).toBe('exemptionReason');
    expect(checkTaxCategory('exempt', 'DE-4-14a', at({ taxRate: '0' }))?.message).toMatch(/not an exemption reason of AT/);
    expect(checkTaxCategory('exempt', 'AT-6-1-19', at({ taxRate: '0' }))).toBeNull();
    expect(checkTaxCategory('exempt', 'AT-6-1-27', at({ taxRate: '0' }))?.message).toMatch(/small-business scheme/);
    expect(checkTaxCategory('notSubject', 'AT-6-1-19', at({ taxRate: '0' }))?.field).toBe('exemptionReason');
    expect(checkTaxCategory('zeroRated', null, at({ taxRate: '0' }))?.message).toMatch(/does not exist in Austria/);
    expect(checkTaxCategory('zeroRated', null, at({ sellerCountry: 'DE', sellerVatId: 'DE123456789', taxRate: '0' }))).toBeNull();
  });

  it('refuses a rate or another category for a small business', () => {
    expect(checkTaxCategory('exempt', 'AT-6-1-27', at({ smallBusiness: true }))?.field).toBe('taxRate');
    expect(checkTaxCategory('export', null, at({ smallBusiness: true, taxRate: '0' }))?.field).toBe('taxCategory');
    expect(checkTaxCategory('exempt', 'AT-6-1-27', at({ smallBusiness: true, taxRate: '0' }))).toBeNull();
  });

  it('names the categories that would fit a bare 0 % line', () => {
    expect(fittingZeroCategories(at({ taxRate: '0' }))).toEqual(['exempt', 'export', 'notSubject']);
    expect(fittingZeroCategories(at({ taxRate: '0', buyerVatId: 'DE123456789' }))).toEqual([
      'exempt',
      'reverseCharge',
      'intraCommunitySupply',
      'export',
      'notSubject',
    ]);
    expect(fittingZeroCategories(at({ sellerCountry: 'DE', taxRate: '0' }))[0]).toBe('zeroRated');
    expect(fittingZeroCategories(at({ smallBusiness: true, taxRate: '0' }))).toEqual(['exempt']);
  });

  it('has unique codes with a legal basis, and VATEX codes only from the CEF list', () => {
    for (const country of ['AT', 'DE'] as const) {
      const codes = EXEMPTION_REASONS[country].map((r) => r.code);
      expect(new Set(codes).size).toBe(codes.length);
      for (const r of EXEMPTION_REASONS[country]) {
        expect(r.code.startsWith(`${country}-`)).toBe(true);
        expect(r.legalBasis).toMatch(/UStG/);
        if (r.vatex) expect(r.vatex).toMatch(/^VATEX-EU-132(-1[A-Q])?$/);
      }
    }
    expect(exemptionReason('AT', 'AT-6-1-16')?.legalBasis).toBe('§ 6 Abs. 1 Z 16 UStG 1994');
    expect(exemptionReason('FR', 'AT-6-1-16')).toBeNull();
  });
});

describe('statutory wording and VATEX per category', () => {
  it('words each category per seller country and takes the VATEX of the category or the reason', async () => {
    const { categoryNote, categoryVatex } = await import('../../shared/domain/tax/vatCategory');
    expect(categoryNote('standard', 'AT')).toBeNull();
    expect(categoryNote('reverseCharge', 'DE')).toMatch(/^Steuerschuldnerschaft des Leistungsempfängers/);
    expect(categoryNote('intraCommunitySupply', 'AT')).toMatch(/Art\. 6 Abs\. 1 i\. V\. m\. Art\. 7 UStG 1994/);
    expect(categoryNote('export', 'DE')).toMatch(/§ 4 Nr\. 1 Buchst\. a/);
    expect(categoryNote('exempt', 'AT', 'AT-6-1-27')).toBe('Umsatzsteuerbefreit – Kleinunternehmer gemäß § 6 Abs. 1 Z 27 UStG 1994.');
    expect(categoryNote('exempt', 'DE', 'DE-19')).toMatch(/§ 19 UStG wird keine Umsatzsteuer berechnet/);
    expect(categoryNote('notSubject', 'FR')).toMatch(/Not subject/);
    expect(categoryVatex('export', 'AT')).toBe('VATEX-EU-G');
    expect(categoryVatex('exempt', 'AT', 'AT-6-1-19')).toBe('VATEX-EU-132-1C');
    expect(categoryVatex('exempt', 'AT', 'AT-6-1-16')).toBeNull();
    expect(categoryVatex('zeroRated', 'DE')).toBeNull();
  });
});
