import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { addDays, addressLines, formatAmount, formatDate, formatMoney, formatPercent, formatQuantity, isZero } from '../../../shared/formats/pdf/format';

describe('formatMoney', () => {
  it('prints German grouping and decimal comma with the euro sign after the amount', () => {
    expect(formatMoney('1234.50', 'EUR')).toBe('1.234,50 €');
    expect(formatMoney('0.00', 'EUR')).toBe('0,00 €');
    expect(formatMoney('1000000.00', 'EUR')).toBe('1.000.000,00 €');
    expect(formatMoney('999.99', 'EUR')).toBe('999,99 €');
  });

  it('pads to two places and keeps the sign of negative amounts (credit notes)', () => {
    expect(formatMoney('12.5', 'EUR')).toBe('12,50 €');
    expect(formatMoney('7', 'EUR')).toBe('7,00 €');
    expect(formatMoney('-1234.50', 'EUR')).toBe('-1.234,50 €');
    expect(formatMoney('-0.00', 'EUR')).toBe('0,00 €');
  });

  it('uses the ISO code for currencies other than EUR', () => {
    expect(formatMoney('1234.50', 'CHF')).toBe('1.234,50 CHF');
    expect(formatMoney('5.00', 'usd')).toBe('5,00 USD');
  });

  it('refuses values that are not rounded to cents or not decimals at all', () => {
    expect(() => formatAmount('1.234')).toThrow(/more than two decimal places/);
    expect(() => formatAmount('1e3')).toThrow(/Not a decimal/);
    expect(() => formatAmount('12,50')).toThrow(/Not a decimal/);
    expect(formatAmount('1.2300')).toBe('1,23');
  });

  it('never loses digits: grouping removed gives back the input (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n }), fc.integer({ min: 0, max: 99 }), (int, cents) => {
        const input = `${int}.${String(cents).padStart(2, '0')}`;
        const printed = formatAmount(input);
        expect(printed.replace(/\./g, '').replace(',', '.')).toBe(input);
      }),
    );
  });
});

describe('formatQuantity / formatPercent', () => {
  it('drops trailing zeros, keeps up to four places and groups thousands', () => {
    expect(formatQuantity('2.5000')).toBe('2,5');
    expect(formatQuantity('1')).toBe('1');
    expect(formatQuantity('0.125')).toBe('0,125');
    expect(formatQuantity('1000')).toBe('1.000');
    expect(formatQuantity('10.0000')).toBe('10');
  });

  it('prints tax rates with a space before the percent sign', () => {
    expect(formatPercent('20')).toBe('20 %');
    expect(formatPercent('7.50')).toBe('7,5 %');
    expect(formatPercent('0')).toBe('0 %');
  });
});

describe('dates', () => {
  it('prints DD.MM.YYYY from dates and timestamps without timezone shifts', () => {
    expect(formatDate('2026-01-05')).toBe('05.01.2026');
    expect(formatDate('2026-12-31T23:30:00.000Z')).toBe('31.12.2026');
    expect(() => formatDate('05.01.2026')).toThrow();
  });

  it('adds days across month and leap-year boundaries', () => {
    expect(addDays('2026-01-20', 14)).toBe('2026-02-03');
    expect(addDays('2028-02-20', 10)).toBe('2028-03-01');
    expect(addDays('2027-02-20', 10)).toBe('2027-03-02');
    expect(addDays('2026-12-25', 7)).toBe('2027-01-01');
  });
});

describe('helpers', () => {
  it('recognises zero in any spelling', () => {
    expect(isZero('0')).toBe(true);
    expect(isZero('0.00')).toBe(true);
    expect(isZero('-0.0')).toBe(true);
    expect(isZero('0.01')).toBe(false);
  });

  it('splits addresses on newlines, or on commas when entered on one line', () => {
    expect(addressLines('Hauptstraße 5\n10115 Berlin')).toEqual(['Hauptstraße 5', '10115 Berlin']);
    expect(addressLines('Hauptstraße 5, 10115 Berlin')).toEqual(['Hauptstraße 5', '10115 Berlin']);
    expect(addressLines(null)).toEqual([]);
  });
});
