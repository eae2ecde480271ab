import { describe, expect, it } from 'vitest';
import { formatInvoiceNumber, parseInvoiceNumber } from '../../shared/domain/numbering';
import { addDays, isValidDate, todayVienna, wallClockIn } from '../../shared/domain/dates';
import { allowedTaxRates, normalizeAllowedRate, taxRateMessage } from '../../shared/domain/taxRates';

describe('numbering', () => {
  it('formats RE-/AN-/GS- with five digits', () => {
    expect(formatInvoiceNumber('rechnung', 2026, 1)).toBe('RE-2026-00001');
    expect(formatInvoiceNumber('angebot', 2026, 42)).toBe('AN-2026-00042');
    expect(formatInvoiceNumber('gutschrift', 2027, 123456)).toBe('GS-2027-123456');
    expect(() => formatInvoiceNumber('eingangsrechnung', 2026, 1)).toThrow();
    expect(parseInvoiceNumber('RE-2026-00007')).toEqual({ prefix: 'RE', year: 2026, counter: 7 });
  });
});

describe('dates', () => {
  it('today in Vienna crosses the year before UTC does', () => {
    expect(todayVienna(new Date('2026-12-31T23:30:00Z'))).toBe('2027-01-01');
    expect(todayVienna(new Date('2026-06-30T21:59:00Z'))).toBe('2026-06-30');
  });
  it('adds days across months and leap years', () => {
    expect(addDays('2028-02-20', 14)).toBe('2028-03-05');
    expect(addDays('2026-12-25', 14)).toBe('2027-01-08');
    expect(isValidDate('2026-02-29')).toBe(false);
    expect(isValidDate('2028-02-29')).toBe(true);
  });
  it('wall clock of an instant in a time zone: the local day and hour, midnight as 00, summer time', () => {
    expect(wallClockIn('Europe/Vienna', new Date('2026-12-31T23:30:05Z'))).toEqual({ year: '2027', month: '01', day: '01', hour: '00', minute: '30', second: '05' });
    expect(wallClockIn('Europe/Berlin', new Date('2026-07-01T10:00:00Z'))).toMatchObject({ day: '01', hour: '12' });
    expect(wallClockIn('UTC', new Date('2026-07-01T10:00:00Z'))).toMatchObject({ hour: '10' });
  });
});

describe('tax rates by country', () => {
  it('AT (and default), DE', () => {
    expect(allowedTaxRates('AT')).toEqual(['0', '10', '13', '20']);
    expect(allowedTaxRates('FR')).toEqual(['0', '10', '13', '20']);
    expect(allowedTaxRates('DE')).toEqual(['0', '7', '19']);
    expect(normalizeAllowedRate('20.00', 'AT')).toBe('20');
    expect(normalizeAllowedRate('19', 'AT')).toBeNull();
    expect(normalizeAllowedRate('19.0', 'DE')).toBe('19');
    expect(taxRateMessage('DE')).toContain('0, 7, 19');
  });
});
