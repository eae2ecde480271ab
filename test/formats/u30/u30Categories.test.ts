import { describe, expect, it } from 'vitest';
import { computeU30 } from '../../../shared/domain/tax/u30';
import { computeUstvaDe } from '../../../shared/domain/tax/ustvaDe';
import { taxReportReason } from '../../../shared/domain/tax/errors';
import { buildU30Xml } from '../../../shared/formats/u30/u30Xml';
import { buildElsterUstvaXml } from '../../../shared/formats/elster/ustvaXml';
import { monthPeriod } from '../../../shared/domain/tax/period';

/** The category parts of the returns, computed by hand (docs/tax-reports.md). */
const reason = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return taxReportReason(err);
  }
  return undefined;
};

describe('computeU30 with categories', () => {
  it('exempt parts, not subject, acquisitions at a reduced rate', () => {
    const r = computeU30({
      salesByRate: [
        { taxRate: '20', net: '100.00' },
        { taxRate: '0', net: '1000.00' },
      ],
      reverseChargeEuNet: '0',
      exemptSmallBusinessNet: '0',
      exemptLandNet: '300.00',
      exemptOtherNet: '200.00',
      notSubjectNet: '500.00',
      inputTax: '5.00',
      purchaseAcquisitionNet: '100.00',
      purchaseTaxRate: '10',
    });
    // 000 = 1100 − 500 = 600 = 100 + 300 + 200; 073 = 100 (10 %), tax 10.00 = 065
    expect(r.kennzahlen).toMatchObject({ '000': '600.00', '019': '300.00', '020': '200.00', '070': '100.00', '073': '100.00', '065': '10.00' });
    expect(r.kennzahlen['072']).toBeUndefined();
    // 095 = 20.00 + 10.00 − 5.00 − 10.00
    expect(r.payable).toBe('15.00');
    expect(r.unclassifiedZeroRatedNet).toBe('0.00');
  });

  it('a zero rate has no U30 Kennzahl: it stays unclassified', () => {
    const r = computeU30({ salesByRate: [{ taxRate: '0', net: '50.00' }], reverseChargeEuNet: '0', zeroRatedNet: '50.00', inputTax: '0' });
    expect(r.unclassifiedZeroRatedNet).toBe('50.00');
  });
});

describe('the writers check the new Kennzahlen', () => {
  it('U30: KZ 070 must be the sum of 072/073/008', () => {
    const kennzahlen = { '000': '0.00', '070': '100.00', '072': '90.00', '065': '18.00' };
    expect(reason(() => buildU30Xml({ period: monthPeriod(2026, 3), taxNumber: '12-345/6789', kennzahlen }))).toBe('INVALID_AMOUNT');
  });

  it('ELSTER: Kz 83 includes Kz 47, 89, 61 and 67', () => {
    const r = computeUstvaDe({
      salesByRate: [],
      reverseChargeEuNet: '0',
      inputTax: '0',
      purchaseReverseChargeNet: '100.00',
      purchaseAcquisitionNet: '200.00',
      purchaseTaxRate: '19',
    });
    expect(r.kennzahlen).toMatchObject({ '46': '100', '47': '19.00', '67': '19.00', '89': '200', '61': '38.00', '83': '0.00' });
    const company = { name: 'Test GmbH', street: 'Straße 1', postalCode: '10115', city: 'Berlin' };
    const base = { year: 2026, period: monthPeriod(2026, 3), steuernummer: '9198011310010', company };
    expect(() => buildElsterUstvaXml({ ...base, kennzahlen: r.kennzahlen })).not.toThrow();
    expect(reason(() => buildElsterUstvaXml({ ...base, kennzahlen: { ...r.kennzahlen, '67': '0.00' } }))).toBe('INVALID_AMOUNT');
  });
});
