import { describe, expect, it } from 'vitest';
import { periodAt, periodsFrom, type Schedule } from '../../shared/domain/recurrence';

const monthly = (over: Partial<Schedule> = {}): Schedule => ({ interval: 'monthly', dayOfMonth: null, startDate: '2026-01-15', endDate: null, ...over });

describe('recurrence', () => {
  it('bills monthly on the start day, each period ending the day before the next', () => {
    expect(periodsFrom(monthly(), 0, 3)).toEqual([
      { index: 0, start: '2026-01-15', end: '2026-02-14' },
      { index: 1, start: '2026-02-15', end: '2026-03-14' },
      { index: 2, start: '2026-03-15', end: '2026-04-14' },
    ]);
  });

  it('takes the last day of a shorter month for day 31, and the 31st again after it', () => {
    const s = monthly({ startDate: '2026-01-31', dayOfMonth: 31 });
    expect(periodsFrom(s, 0, 4).map((p) => p.start)).toEqual(['2026-01-31', '2026-02-28', '2026-03-31', '2026-04-30']);
    expect(periodAt(monthly({ startDate: '2028-01-31', dayOfMonth: 31 }), 1)?.start).toBe('2028-02-29');
    expect(periodAt(s, 0)?.end).toBe('2026-02-27');
  });

  it('starts in the next month when dayOfMonth lies before the start day', () => {
    expect(periodAt(monthly({ startDate: '2026-01-15', dayOfMonth: 1 }), 0)).toEqual({ index: 0, start: '2026-02-01', end: '2026-02-28' });
    expect(periodAt(monthly({ startDate: '2026-01-15', dayOfMonth: 20 }), 0)?.start).toBe('2026-01-20');
  });

  it('steps by 3, 6 and 12 months across years', () => {
    expect(periodsFrom({ ...monthly({ startDate: '2026-11-01' }), interval: 'quarterly' }, 0, 3).map((p) => p.start)).toEqual([
      '2026-11-01',
      '2027-02-01',
      '2027-05-01',
    ]);
    expect(periodAt({ ...monthly({ startDate: '2026-08-31' }), interval: 'halfYearly' }, 1)?.start).toBe('2027-02-28');
    expect(periodAt({ ...monthly({ startDate: '2028-02-29' }), interval: 'yearly' }, 1)).toEqual({ index: 1, start: '2029-02-28', end: '2030-02-27' });
  });

  it('stops at endDate and cuts the last period there', () => {
    const s = monthly({ startDate: '2026-01-01', endDate: '2026-03-10' });
    expect(periodsFrom(s, 0, 12)).toEqual([
      { index: 0, start: '2026-01-01', end: '2026-01-31' },
      { index: 1, start: '2026-02-01', end: '2026-02-28' },
      { index: 2, start: '2026-03-01', end: '2026-03-10' },
    ]);
    expect(periodAt(s, 3)).toBeNull();
  });
});
