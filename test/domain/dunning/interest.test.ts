import { describe, expect, it } from 'vitest';
import { customerTypeOf, defaultInterest, dunningLaw, type BaseRate } from '../../../shared/domain/dunning/interest';
import { dunningSettingsProblems, nextLevel, noticeAmounts, type DunningLevel } from '../../../shared/domain/dunning/levels';

// Published values (docs/dunning.md): Bundesbank 1.1.2025 2.27, 1.7.2025 1.27; OeNB 12.3.2025 2.03, 11.6.2025 1.53.
const DE: BaseRate[] = [
  { validFrom: '2024-07-01', rate: '3.37' },
  { validFrom: '2025-01-01', rate: '2.27' },
  { validFrom: '2025-07-01', rate: '1.27' },
];
const AT: BaseRate[] = [
  { validFrom: '2024-12-18', rate: '2.53' },
  { validFrom: '2025-03-12', rate: '2.03' },
  { validFrom: '2025-06-11', rate: '1.53' },
];

describe('default interest, to the cent', () => {
  it('DE business: base + 9, split at the 1 July change, each period rounded', () => {
    const r = defaultInterest({ law: 'DE', customerType: 'business', principal: '1000.00', after: '2025-06-15', through: '2025-07-15', baseRates: DE });
    // 16.–30.6.: 15 days at 11.27 % = 4.6315 → 4.63; 1.–15.7.: 15 days at 10.27 % = 4.2205… → 4.22
    expect(r.periods).toEqual([
      { from: '2025-06-16', to: '2025-06-30', days: 15, baseRate: '2.27', rate: '11.27', amount: '4.63' },
      { from: '2025-07-01', to: '2025-07-15', days: 15, baseRate: '1.27', rate: '10.27', amount: '4.22' },
    ]);
    expect(r.total).toBe('8.85');
  });

  it('DE consumer: base + 5 across the change', () => {
    const r = defaultInterest({ law: 'DE', customerType: 'consumer', principal: '1000.00', after: '2025-06-15', through: '2025-07-15', baseRates: DE });
    // 15 days at 7.27 % = 2.9876… → 2.99; 15 days at 6.27 % = 2.5767… → 2.58
    expect(r.periods.map((p) => [p.rate, p.amount])).toEqual([
      ['7.27', '2.99'],
      ['6.27', '2.58'],
    ]);
    expect(r.total).toBe('5.57');
  });

  it('AT business: base + 9.2, split at the OeNB change of 11 June 2025', () => {
    const r = defaultInterest({ law: 'AT', customerType: 'business', principal: '1000.00', after: '2025-05-31', through: '2025-06-30', baseRates: AT });
    // 1.–10.6.: 10 days at 11.23 % = 3.0767… → 3.08; 11.–30.6.: 20 days at 10.73 % = 5.8794… → 5.88
    expect(r.periods).toEqual([
      { from: '2025-06-01', to: '2025-06-10', days: 10, baseRate: '2.03', rate: '11.23', amount: '3.08' },
      { from: '2025-06-11', to: '2025-06-30', days: 20, baseRate: '1.53', rate: '10.73', amount: '5.88' },
    ]);
    expect(r.total).toBe('8.96');
  });

  it('AT consumer: a fixed 4 % (§ 1000 ABGB), no base rate needed, one period', () => {
    const r = defaultInterest({ law: 'AT', customerType: 'consumer', principal: '1000.00', after: '2025-05-31', through: '2025-06-30', baseRates: [] });
    // 30 days at 4 % = 3.2876… → 3.29
    expect(r.periods).toEqual([{ from: '2025-06-01', to: '2025-06-30', days: 30, baseRate: null, rate: '4.00', amount: '3.29' }]);
    expect(r.total).toBe('3.29');
  });

  it('rounds half-up, not half-even, and never through a float', () => {
    // 5475.00 × 10.27 % × 10 / 365 = 15.405 exactly → 15.41 (half-even would give 15.40)
    const r = defaultInterest({ law: 'DE', customerType: 'business', principal: '5475.00', after: '2025-07-31', through: '2025-08-10', baseRates: DE });
    expect(r.total).toBe('15.41');
  });

  it('a leap year still divides by 365, and counts 29 February', () => {
    const r = defaultInterest({ law: 'AT', customerType: 'consumer', principal: '3650.00', after: '2024-02-27', through: '2024-03-01', baseRates: [] });
    // 28.2., 29.2., 1.3. = 3 days at 4 % of 3650 = 1.20
    expect(r.periods[0].days).toBe(3);
    expect(r.total).toBe('1.20');
  });

  it('nothing before the day after the due date; through the due date itself gives 0.00', () => {
    expect(defaultInterest({ law: 'DE', customerType: 'business', principal: '100.00', after: '2025-07-10', through: '2025-07-10', baseRates: DE })).toEqual({
      total: '0.00',
      periods: [],
    });
    // One day: 100 × 10.27 % / 365 = 0.0281… → 0.03
    expect(defaultInterest({ law: 'DE', customerType: 'business', principal: '100.00', after: '2025-07-10', through: '2025-07-11', baseRates: DE }).total).toBe(
      '0.03',
    );
  });

  it('refuses a span that starts before the first known base rate (422)', () => {
    expect(() =>
      defaultInterest({ law: 'DE', customerType: 'business', principal: '100.00', after: '2020-01-01', through: '2025-07-11', baseRates: DE }),
    ).toThrow(/No DE base rate is known for 2020-01-02/);
  });

  it('a negative base rate counts (DE 2022: -0.88 + 9 = 8.12 %)', () => {
    const r = defaultInterest({
      law: 'DE',
      customerType: 'business',
      principal: '3650.00',
      after: '2022-12-30',
      through: '2023-01-02',
      baseRates: [
        { validFrom: '2022-07-01', rate: '-0.88' },
        { validFrom: '2023-01-01', rate: '1.62' },
      ],
    });
    // 31.12.2022: 1 day at 8.12 % of 3650 = 0.812 → 0.81; 1.–2.1.2023: 2 days at 10.62 % = 2.124 → 2.12
    expect(r.periods.map((p) => [p.rate, p.days, p.amount])).toEqual([
      ['8.12', 1, '0.81'],
      ['10.62', 2, '2.12'],
    ]);
    expect(r.total).toBe('2.93');
  });
});

describe('who is a business', () => {
  it('customerType wins; else a VAT id or a company name makes a business', () => {
    expect(customerTypeOf({ customerType: 'consumer', company: 'ACME GmbH' })).toBe('consumer');
    expect(customerTypeOf({ customerType: 'business' })).toBe('business');
    expect(customerTypeOf({ vatId: 'DE123456789' })).toBe('business');
    expect(customerTypeOf({ company: 'ACME GmbH' })).toBe('business');
    expect(customerTypeOf({ vatId: 'ATU00000000', company: ' ' })).toBe('consumer');
    expect(customerTypeOf({})).toBe('consumer');
  });
  it('the tenant country decides the law', () => {
    expect(dunningLaw('AT')).toBe('AT');
    expect(dunningLaw('DE')).toBe('DE');
    expect(dunningLaw('IT')).toBeNull();
  });
});

const level = (daysAfterDue: number, fee: string, chargeInterest = true): DunningLevel => ({
  daysAfterDue,
  fee,
  chargeInterest,
  emailSubject: 's',
  emailBody: 'b',
});

describe('levels', () => {
  it('settings: increasing days, decimal fees, at most 3, interest only where a law is known', () => {
    expect(dunningSettingsProblems({ enabled: true, automatic: false, levels: [level(7, '0.00'), level(21, '5.00')] }, 'AT')).toEqual([]);
    const fields = (p: { field?: string }[]) => p.map((d) => d.field);
    expect(fields(dunningSettingsProblems({ enabled: true, automatic: false, levels: [level(14, '5'), level(14, '5')] }, 'AT'))).toEqual([
      'dunning.levels.1.daysAfterDue',
    ]);
    expect(fields(dunningSettingsProblems({ enabled: true, automatic: false, levels: [level(14, '5.001')] }, 'AT'))).toEqual(['dunning.levels.0.fee']);
    expect(
      fields(dunningSettingsProblems({ enabled: true, automatic: false, levels: [level(1, '1'), level(2, '1'), level(3, '1'), level(4, '1')] }, 'DE')),
    ).toEqual(['dunning.levels']);
    expect(fields(dunningSettingsProblems({ enabled: true, automatic: false, levels: [] }, 'DE'))).toEqual(['dunning.levels']);
    expect(fields(dunningSettingsProblems({ enabled: false, automatic: false, levels: [level(7, '1')] }, 'IT'))).toEqual(['dunning.levels.0.chargeInterest']);
  });

  it('the next level waits for its days after the due date, and for the gap after the previous notice', () => {
    const levels = [level(7, '0'), level(21, '5'), level(35, '10')];
    expect(nextLevel(levels, '2026-01-31', [])).toEqual({ level: 1, dueOn: '2026-02-07' });
    // Level 1 issued late (found 60 days overdue): level 2 comes 14 days after it, not the next day.
    const issued = [{ level: 1, issueDate: '2026-04-01', interestTo: null, fee: '0.00', interest: '0.00', lumpSumCharged: false }];
    expect(nextLevel(levels, '2026-01-31', issued)).toEqual({ level: 2, dueOn: '2026-04-15' });
    expect(nextLevel(levels, '2026-01-31', [...issued, { ...issued[0], level: 2 }, { ...issued[0], level: 3 }])).toBeNull();
  });

  it('a notice charges interest once: the next one from the day after the last charged day; the lump sum once, to businesses', () => {
    const common = { tenantCountry: 'DE', customerType: 'business' as const, amountDue: '1000.00', dueDate: '2025-06-15', baseRates: DE };
    const first = noticeAmounts({ ...common, level: 1, settings: level(7, '5.00'), asOf: '2025-07-15', issued: [] });
    expect(first).toMatchObject({
      fee: '45.00',
      interest: '8.85',
      interestFrom: '2025-06-16',
      interestTo: '2025-07-15',
      lumpSumCharged: true,
      totalDue: '1053.85',
    });
    const issued = [{ level: 1, issueDate: '2025-07-15', interestTo: '2025-07-15', fee: first.fee, interest: first.interest, lumpSumCharged: true }];
    const second = noticeAmounts({ ...common, level: 2, settings: level(21, '10.00'), asOf: '2025-07-25', issued });
    // 16.–25.7.: 10 days at 10.27 % = 2.8136… → 2.81; earlier charges 53.85
    expect(second).toMatchObject({
      fee: '10.00',
      interest: '2.81',
      interestFrom: '2025-07-16',
      earlierCharges: '53.85',
      lumpSumCharged: false,
      totalDue: '1066.66',
    });
    const consumer = noticeAmounts({ ...common, customerType: 'consumer', level: 1, settings: level(7, '5.00'), asOf: '2025-07-15', issued: [] });
    expect(consumer).toMatchObject({ fee: '5.00', interest: '5.57', lumpSumCharged: false, totalDue: '1010.57' });
    const noInterest = noticeAmounts({ ...common, level: 1, settings: level(7, '2.50', false), asOf: '2025-07-15', issued: [] });
    expect(noInterest).toMatchObject({ fee: '2.50', interest: '0.00', interestFrom: null, totalDue: '1002.50' });
  });
});
