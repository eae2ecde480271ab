import Decimal from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { amountPlaces, currencyExponent, decimalToAmount, minorToDecimal, normalizeCurrency } from '../../../shared/providers/payments/currency';

describe('currency: minor units', () => {
  it('two-decimal currencies', () => {
    expect(minorToDecimal(1234, 'EUR')).toBe('12.34');
    expect(minorToDecimal(5, 'eur')).toBe('0.05');
    expect(minorToDecimal(0, 'USD')).toBe('0.00');
    expect(minorToDecimal(-150, 'EUR')).toBe('-1.50');
    expect(minorToDecimal('1000', 'CHF')).toBe('10.00');
  });

  it('zero-decimal currencies (JPY, KRW) are not divided', () => {
    expect(minorToDecimal(500, 'JPY')).toBe('500.00');
    expect(minorToDecimal(123456, 'krw')).toBe('123456.00');
    expect(currencyExponent('JPY')).toBe(0);
  });

  it('three-decimal currencies (KWD, BHD) keep their third place rather than rounding money away', () => {
    expect(minorToDecimal(1234, 'KWD')).toBe('1.234');
    expect(minorToDecimal(1230, 'KWD')).toBe('1.230');
    expect(minorToDecimal(5, 'BHD')).toBe('0.005');
    expect(currencyExponent('kwd')).toBe(3);
    expect(amountPlaces('KWD')).toBe(3);
    expect(amountPlaces('EUR')).toBe(2);
    expect(amountPlaces('JPY')).toBe(2);
  });

  it('an explicit exponent overrides ISO (for provider quirks)', () => {
    expect(minorToDecimal(10000, 'ISK', 2)).toBe('100.00');
    expect(minorToDecimal(10000, 'ISK')).toBe('10000.00');
  });

  it('big integers stay exact (no float on the way)', () => {
    expect(minorToDecimal('123456789012345678901234', 'EUR')).toBe('1234567890123456789012.34');
    expect(minorToDecimal(9007199254740991n, 'EUR')).toBe('90071992547409.91');
    expect(minorToDecimal(Number.MAX_SAFE_INTEGER, 'EUR')).toBe('90071992547409.91');
  });

  it('refuses non-integers, unsafe integers and bad codes', () => {
    expect(() => minorToDecimal(12.5, 'EUR')).toThrow(RangeError);
    expect(() => minorToDecimal(2 ** 60, 'EUR')).toThrow(RangeError);
    expect(() => minorToDecimal('12.5', 'EUR')).toThrow(RangeError);
    expect(() => minorToDecimal('1e3', 'EUR')).toThrow(RangeError);
    expect(() => minorToDecimal(1, 'EURO')).toThrow(RangeError);
    expect(normalizeCurrency('usd')).toBe('USD');
    expect(normalizeCurrency('US')).toBeNull();
    expect(normalizeCurrency(978)).toBeNull();
  });

  it('property: minorToDecimal is exact and reversible for every exponent', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), fc.constantFrom('EUR', 'JPY', 'KWD', 'CLF', 'USD', 'XOF'), (minor, currency) => {
        const s = minorToDecimal(minor, currency);
        const back = new Decimal(s).times(new Decimal(10).pow(currencyExponent(currency)));
        expect(back.toFixed(0)).toBe(String(minor));
        expect(s.split('.')[1].length).toBe(amountPlaces(currency));
        expect(decimalToAmount(s, currency)).toBe(s);
      }),
    );
  });
});

describe('currency: provider decimal strings', () => {
  it("formats to the currency's places", () => {
    expect(decimalToAmount('30.0', 'USD')).toBe('30.00');
    expect(decimalToAmount('2.51', 'USD')).toBe('2.51');
    expect(decimalToAmount('2.510', 'USD')).toBe('2.51');
    expect(decimalToAmount('100', 'JPY')).toBe('100.00');
    expect(decimalToAmount('1.5', 'KWD')).toBe('1.500');
  });

  it('refuses anything that would need rounding or is not a plain decimal', () => {
    expect(() => decimalToAmount('2.515', 'USD')).toThrow(/more decimal places/);
    expect(() => decimalToAmount('1.2345', 'KWD')).toThrow(/more decimal places/);
    for (const bad of ['1e3', '', ' 1.00', '1,00', '0x10', 'NaN', 12.5, null]) {
      expect(() => decimalToAmount(bad, 'EUR')).toThrow(RangeError);
    }
  });
});
