/**
 * A document in another currency states its VAT in EUR (issue 27, item 5): CII BT-6 = EUR with
 * BT-111, ebInterface CurrencyExchangeInformation and AccountingCurrencyAmount, a line on the PDF.
 */
import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import type { DocumentInput } from '../../../shared/domain/invoiceView';
import { buildCiiXml } from '../../../shared/formats/cii/ciiInvoice';
import { checkEn16931 } from '../../../shared/formats/cii/en16931Rules';
import { buildEbInterfaceXml } from '../../../shared/formats/ebinterface/ebInterfaceInvoice';
import { vatInEur } from '../../../shared/formats/pdf/legalNotes';
import { needsOfficialFiles } from '../../helpers/officialFiles';
import { validateXml } from '../../helpers/xmllint';
import { CII_D16B_XSD, CII_D16B_XSD_FILE, CII_XSD, CII_XSD_FILE, customerAT, EBI_XSD, EBI_XSD_FILE, makeDocument, negateAmounts, sellerAT } from './fixtures';

const official = needsOfficialFiles([CII_XSD_FILE, CII_D16B_XSD_FILE, EBI_XSD_FILE]);
const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', removeNSPrefix: true, parseTagValue: false });

/** 2 x 100.00 USD at 20 %: tax 40.00 USD = 36.81 EUR at 1.0867 USD per EUR. */
function usd(): DocumentInput {
  const input = makeDocument(sellerAT, customerAT, { currency: 'USD' });
  input.invoice.exchangeRate = { rate: '1.0867', date: '2026-03-09', source: 'ecb' };
  return input;
}

describe('VAT in EUR on foreign-currency documents', () => {
  it('CII: BT-6 = EUR and BT-111, valid and passing the checker', () => {
    const xml = buildCiiXml(usd());
    expect(checkEn16931(xml)).toEqual([]);
    if (official) {
      expect(validateXml(xml, CII_XSD).errors).toBe('');
      expect(validateXml(xml, CII_D16B_XSD).valid).toBe(true);
    }
    const s = parser.parse(xml).CrossIndustryInvoice.SupplyChainTradeTransaction.ApplicableHeaderTradeSettlement;
    expect(s.TaxCurrencyCode).toBe('EUR');
    expect(s.InvoiceCurrencyCode).toBe('USD');
    expect(s.SpecifiedTradeSettlementHeaderMonetarySummation.TaxTotalAmount).toEqual([
      { '#text': '40.00', '@_currencyID': 'USD' },
      { '#text': '36.81', '@_currencyID': 'EUR' },
    ]);
  });

  it('a credit note converts its positive amounts the same way', () => {
    const input = negateAmounts(usd());
    input.invoice.type = 'gutschrift';
    input.invoice.exchangeRate = { rate: '1.0867', date: '2026-03-09', source: 'ecb' };
    const xml = buildCiiXml(input);
    expect(checkEn16931(xml)).toEqual([]);
    expect(xml).toContain('<ram:TaxTotalAmount currencyID="EUR">36.81</ram:TaxTotalAmount>');
  });

  it('nothing for EUR documents or without a rate', () => {
    const eur = makeDocument(sellerAT, customerAT);
    eur.invoice.exchangeRate = null;
    expect(buildCiiXml(eur)).not.toContain('TaxCurrencyCode');
    const noRate = makeDocument(sellerAT, customerAT, { currency: 'USD' });
    expect(buildCiiXml(noRate)).not.toContain('TaxCurrencyCode');
    expect(vatInEur(noRate)).toBeNull();
  });

  it('the checker names BR-53 when BT-111 is missing or BT-6 equals the invoice currency', () => {
    const xml = buildCiiXml(usd());
    const rules = (x: string) => new Set(checkEn16931(x).map((v) => v.rule));
    expect(rules(xml.replace(/\s*<ram:TaxTotalAmount currencyID="EUR">[^<]*<\/ram:TaxTotalAmount>/, ''))).toEqual(new Set(['BR-53']));
    expect(rules(xml.replace('<ram:TaxCurrencyCode>EUR', '<ram:TaxCurrencyCode>USD'))).toContain('BR-53');
    expect(rules(xml.replace('currencyID="EUR">36.81<', 'currencyID="EUR">36.812<'))).toEqual(new Set(['BR-DEC-15']));
  });

  it.skipIf(!official)('ebInterface: CurrencyExchangeInformation and the tax in EUR per group, valid against the XSD', () => {
    const xml = buildEbInterfaceXml(usd());
    expect(validateXml(xml, EBI_XSD).errors).toBe('');
    const inv = parser.parse(xml).Invoice;
    expect(inv.CurrencyExchangeInformation).toEqual({
      Currency: 'USD',
      ExchangeRate: '1.0867',
      ExchangeRateDate: '2026-03-09',
      Comment: '1 EUR = 1.0867 USD (EZB-Referenzkurs vom 09.03.2026); USt. in EUR: 36.81',
    });
    expect(inv.Tax.TaxItem.AccountingCurrencyAmount).toEqual({ '#text': '36.81', '@_Currency': 'EUR' });
  });

  it('ebInterface compares the recipient-UID limit (EUR 10,000) in EUR when the rate is stored', () => {
    const big = (rate: boolean) => {
      const input = makeDocument(
        sellerAT,
        { ...customerAT, vatId: null },
        {
          currency: 'USD',
          itemSpecs: [{ description: 'Anlage', quantity: '1', unitPrice: '9000.00', taxRate: '20' }],
        },
      );
      input.invoice.exchangeRate = rate ? { rate: '1.0867', date: '2026-03-09', source: 'ecb' } : null;
      return input;
    };
    // 10,800.00 USD = 9,938.34 EUR: below the limit.
    expect(() => buildEbInterfaceXml(big(true))).not.toThrow();
    expect(() => buildEbInterfaceXml(big(false))).toThrow(/EBI-UID-RECIPIENT/);
  });

  it('PDF line: USt. in EUR with the rate and its day', () => {
    expect(vatInEur(usd())).toBe('USt. in EUR: 36,81 € (Kurs 1 EUR = 1,0867 USD vom 09.03.2026, EZB-Referenzkurs)');
  });
});
