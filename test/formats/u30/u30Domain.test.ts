import { describe, expect, it } from 'vitest';
import { computeU30 } from '../../../shared/domain/tax/u30';
import { taxReportReason } from '../../../shared/domain/tax/errors';
import {
  elsterZeitraum,
  monthPeriod,
  parseTaxPeriod,
  periodContains,
  periodYearMonths,
  quarterPeriod,
  viennaDateTime,
} from '../../../shared/domain/tax/period';
import { AppError } from '../../../shared/errors';

describe('computeU30 (known answers, computed by hand)', () => {
  it('mixed rates, a credit note, 0 % reverse charge and input tax', () => {
    const r = computeU30({
      salesByRate: [
        { taxRate: '20', net: '10000.00' },
        { taxRate: '20.00', net: '-1234.56' }, // credit note at 20 %, same rate spelled differently
        { taxRate: '10', net: '2500.55' },
        { taxRate: '13', net: '1000.10' },
        { taxRate: '0', net: '3000.00' },
      ],
      reverseChargeEuNet: '3000.00',
      inputTax: '987.65',
    });
    // 20 %: 10000.00 − 1234.56 = 8765.44; tax 1753.088 -> 1753.09
    // 10 %: 2500.55; tax 250.055 -> 250.06 (half-up on the tie)
    // 13 %: 1000.10; tax 130.013 -> 130.01
    // KZ 000 = 8765.44 + 2500.55 + 1000.10 + 3000.00 = 15266.09
    // output tax = 1753.09 + 250.06 + 130.01 = 2133.16; 095 = 2133.16 − 987.65 = 1145.51
    expect(r.kennzahlen).toEqual({
      '000': '15266.09',
      '011': '0.00',
      '017': '0.00',
      '021': '3000.00',
      '022': '8765.44',
      '029': '2500.55',
      '006': '1000.10',
      '060': '987.65',
      '095': '1145.51',
    });
    expect(r.salesByRate).toEqual([
      { taxRate: '20', net: '8765.44', tax: '1753.09' },
      { taxRate: '13', net: '1000.10', tax: '130.01' },
      { taxRate: '10', net: '2500.55', tax: '250.06' },
      { taxRate: '0', net: '3000.00', tax: '0.00' },
    ]);
    expect(r.outputTax).toBe('2133.16');
    expect(r.inputTax).toBe('987.65');
    expect(r.payable).toBe('1145.51');
    expect(r.unclassifiedZeroRatedNet).toBe('0.00');
  });

  it('a credit period: input tax above output tax gives a negative KZ 095', () => {
    const r = computeU30({ salesByRate: [{ taxRate: '20', net: '1000.00' }], reverseChargeEuNet: '0.00', inputTax: '1500.00' });
    // output tax 200.00; 095 = 200.00 − 1500.00 = −1300.00
    expect(r.kennzahlen['000']).toBe('1000.00');
    expect(r.kennzahlen['022']).toBe('1000.00');
    expect(r.kennzahlen['095']).toBe('-1300.00');
    expect(r.payable).toBe('-1300.00');
  });

  it('credit notes exceeding sales give a negative base; half-up rounds ties away from zero', () => {
    const r = computeU30({
      salesByRate: [
        { taxRate: '10', net: '0.10' },
        { taxRate: '10', net: '-0.15' },
      ],
      reverseChargeEuNet: '0',
      inputTax: '0',
    });
    // 10 %: −0.05; tax −0.005 -> −0.01
    expect(r.kennzahlen['029']).toBe('-0.05');
    expect(r.salesByRate.find((x) => x.taxRate === '10')).toEqual({ taxRate: '10', net: '-0.05', tax: '-0.01' });
    expect(r.kennzahlen['095']).toBe('-0.01');
  });

  it('splits 0 % turnover into reverse charge (021), exports (011) and intra-Community supplies (017)', () => {
    const r = computeU30({
      salesByRate: [{ taxRate: '0', net: '5000.00' }],
      reverseChargeEuNet: '1000.00',
      exportNet: '1500.00',
      intraCommunitySupplyNet: '2000.00',
      inputTax: '0.00',
    });
    expect(r.kennzahlen['000']).toBe('5000.00');
    expect(r.kennzahlen['021']).toBe('1000.00');
    expect(r.kennzahlen['011']).toBe('1500.00');
    expect(r.kennzahlen['017']).toBe('2000.00');
    // 5000 − 1000 − 1500 − 2000 = 500 is 0 % turnover of no known kind
    expect(r.unclassifiedZeroRatedNet).toBe('500.00');
  });

  it('refuses a rate Austria does not have and amounts that are not decimal strings', () => {
    try {
      computeU30({ salesByRate: [{ taxRate: '19', net: '1.00' }], reverseChargeEuNet: '0', inputTax: '0' });
      expect.unreachable();
    } catch (err) {
      expect(taxReportReason(err)).toBe('UNSUPPORTED_TAX_RATE');
      expect((err as AppError).status).toBe(422);
    }
    expect(() => computeU30({ salesByRate: [{ taxRate: '20', net: 1.5 as unknown as string }], reverseChargeEuNet: '0', inputTax: '0' })).toThrow(
      /decimal string/,
    );
    expect(() => computeU30({ salesByRate: [], reverseChargeEuNet: '1e3', inputTax: '0' })).toThrow(/decimal string/);
  });

  it('an empty period is all zeros', () => {
    const r = computeU30({ salesByRate: [], reverseChargeEuNet: '0.00', inputTax: '0.00' });
    expect(Object.values(r.kennzahlen).every((v) => v === '0.00')).toBe(true);
  });
});

describe('tax periods', () => {
  it('months and quarters give inclusive calendar dates and labels', () => {
    expect(parseTaxPeriod({ year: '2026', month: '2' })).toEqual({
      kind: 'month',
      year: 2026,
      month: 2,
      start: '2026-02-01',
      end: '2026-02-28',
      label: '2026-02',
    });
    expect(parseTaxPeriod({ year: 2028, month: 2 }).end).toBe('2028-02-29');
    expect(parseTaxPeriod({ year: 2026, quarter: 3 })).toEqual({
      kind: 'quarter',
      year: 2026,
      quarter: 3,
      start: '2026-07-01',
      end: '2026-09-30',
      label: '2026-Q3',
    });
    expect(quarterPeriod(2026, 4).end).toBe('2026-12-31');
    expect(periodYearMonths(quarterPeriod(2026, 1))).toEqual({ from: '2026-01', to: '2026-03' });
    expect(elsterZeitraum(monthPeriod(2026, 3))).toBe('03');
    expect(elsterZeitraum(quarterPeriod(2026, 2))).toBe('42');
    const march = monthPeriod(2026, 3);
    expect(periodContains(march, '2026-03-31')).toBe(true);
    expect(periodContains(march, '2026-04-01')).toBe(false);
  });

  it('rejects bad input with 400 details', () => {
    for (const bad of [
      { year: 2026 },
      { year: 2026, month: 3, quarter: 1 },
      { year: 2026, month: 13 },
      { year: 2026, quarter: 5 },
      { year: 'abc', month: 1 },
      { year: 2026, month: 1.5 },
    ]) {
      try {
        parseTaxPeriod(bad);
        expect.unreachable(JSON.stringify(bad));
      } catch (err) {
        expect(err).toBeInstanceOf(AppError);
        expect((err as AppError).code).toBe('INVALID_INPUT');
        expect((err as AppError).details?.length).toBeGreaterThan(0);
      }
    }
  });

  it('gives Vienna wall-clock date and time for an instant (CET/CEST)', () => {
    expect(viennaDateTime(new Date('2026-04-09T22:30:05Z'))).toEqual({ date: '2026-04-10', time: '00:30:05' });
    expect(viennaDateTime(new Date('2026-01-31T23:00:00Z'))).toEqual({ date: '2026-02-01', time: '00:00:00' });
  });
});
