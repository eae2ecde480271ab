import { describe, expect, it } from 'vitest';
import { datevPosting, type DatevChart } from '../../../shared/domain/tax/datevMapping';
import type { TaxCategory } from '../../../shared/domain/tax/vatCategory';

/** datevPosting's account and key per stored VAT category (docs/tax-reports.md, "Account mapping"). */
const sale = (chart: DatevChart, taxCategory: TaxCategory | null, exemptionReason?: string, zeroRateKind?: 'reverseChargeEu' | 'export') =>
  datevPosting(chart, { kind: 'salesInvoice', taxRate: '0', gross: '100.00', taxCategory, exemptionReason, zeroRateKind });

describe('datevPosting by VAT category', () => {
  it.each([
    ['SKR03', 'reverseCharge', undefined, '8336'],
    ['SKR03', 'intraCommunitySupply', undefined, '8125'],
    ['SKR03', 'export', undefined, '8120'],
    ['SKR03', 'notSubject', undefined, '8338'],
    ['SKR03', 'zeroRated', undefined, '8290'],
    ['SKR03', 'exempt', 'DE-19', '8195'],
    ['SKR03', 'exempt', 'DE-4-12', '8105'],
    ['SKR03', 'exempt', 'DE-4-14a', '8100'],
    ['SKR04', 'reverseCharge', undefined, '4336'],
    ['SKR04', 'intraCommunitySupply', undefined, '4125'],
    ['SKR04', 'export', undefined, '4120'],
    ['SKR04', 'notSubject', undefined, '4338'],
    ['SKR04', 'zeroRated', undefined, '4290'],
    ['SKR04', 'exempt', 'DE-19', '4185'],
    ['SKR04', 'exempt', 'DE-4-12', '4105'],
    ['SKR04', 'exempt', 'DE-4-21', '4100'],
    ['EKR', 'reverseCharge', undefined, '4120'],
    ['EKR', 'intraCommunitySupply', undefined, '4100'],
    ['EKR', 'export', undefined, '4110'],
    ['EKR', 'notSubject', undefined, '4130'],
    ['EKR', 'exempt', 'AT-6-1-27', '4190'],
    ['EKR', 'exempt', 'AT-6-1-19', '4190'],
  ] as const)('%s %s %s → %s, no key', (chart, category, reason, account) => {
    expect(sale(chart, category, reason)).toEqual({ amount: '100.00', debitCredit: 'S', account: expect.any(String), contraAccount: account });
  });

  it('a row without category (legacy) keeps the inferred kind', () => {
    expect(sale('SKR03', null, undefined, 'reverseChargeEu')?.contraAccount).toBe('8336');
    expect(sale('SKR03', null, undefined, 'export')?.contraAccount).toBe('8120');
    expect(sale('SKR03', null)?.contraAccount).toBe('8100');
    expect(datevPosting('EKR', { kind: 'salesInvoice', taxRate: '0', gross: '100.00' })?.contraAccount).toBe('4190');
  });

  it('purchases: § 13b 94 and ig. Erwerb 19 on SKR03/SKR04, none on EKR or for a small business; credit notes flip S/H', () => {
    const purchase = (chart: DatevChart, taxCategory: TaxCategory, smallBusiness = false, gross = '100.00') =>
      datevPosting(chart, { kind: 'incomingInvoice', taxRate: '0', gross, taxCategory, smallBusiness });
    expect(purchase('SKR03', 'reverseCharge')).toMatchObject({ debitCredit: 'H', account: '1610', contraAccount: '4900', buKey: '94' });
    expect(purchase('SKR04', 'intraCommunitySupply')).toMatchObject({ debitCredit: 'H', account: '3310', contraAccount: '6300', buKey: '19' });
    expect(purchase('SKR03', 'reverseCharge', false, '-100.00')).toMatchObject({ debitCredit: 'S', buKey: '94' });
    expect(purchase('EKR', 'reverseCharge')).not.toHaveProperty('buKey');
    expect(purchase('SKR03', 'reverseCharge', true)).not.toHaveProperty('buKey');
    expect(datevPosting('SKR03', { kind: 'incomingInvoice', taxRate: '19', gross: '119.00', smallBusiness: true })).not.toHaveProperty('buKey');
    expect(datevPosting('SKR03', { kind: 'incomingInvoice', taxRate: '19', gross: '119.00' })).toMatchObject({ buKey: '9' });
  });
});
