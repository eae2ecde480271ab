import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Decimal } from 'decimal.js';
import { ecbRateProblem, isExchangeRate, toEur, validateManualExchangeRate } from '../../shared/domain/exchangeRates';
import { AppError } from '../../shared/errors';

const TODAY = '2026-11-27';

/** The 400 INVALID_INPUT details a manual rate is refused with. */
function refusal(input: unknown, today = TODAY) {
  try {
    validateManualExchangeRate(input, today);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('INVALID_INPUT');
    expect((err as AppError).status).toBe(400);
    return (err as AppError).details;
  }
  throw new Error('accepted');
}

describe('validateManualExchangeRate', () => {
  it('accepts a positive decimal string of today or earlier, in canonical form', () => {
    expect(validateManualExchangeRate({ rate: '1.0867', date: '2026-11-20', source: 'manual' }, TODAY)).toEqual({
      rate: '1.0867',
      date: '2026-11-20',
      source: 'manual',
    });
    // The BMF's monthly average for November, entered on the day itself, with trailing zeros.
    expect(validateManualExchangeRate({ rate: '0.856230', date: TODAY, source: 'manual' }, TODAY).rate).toBe('0.85623');
    expect(validateManualExchangeRate({ rate: '161.85', date: TODAY, source: 'manual' }, TODAY).rate).toBe('161.85');
    expect(validateManualExchangeRate({ rate: '25', date: TODAY, source: 'manual' }, TODAY).rate).toBe('25');
  });

  it('refuses zero and negative rates, naming exchangeRate.rate', () => {
    expect(refusal({ rate: '0', date: TODAY, source: 'manual' })).toEqual([{ field: 'exchangeRate.rate', message: 'must be greater than 0' }]);
    expect(refusal({ rate: '0.000000', date: TODAY, source: 'manual' })).toEqual([{ field: 'exchangeRate.rate', message: 'must be greater than 0' }]);
    expect(refusal({ rate: '-1.08', date: TODAY, source: 'manual' })).toEqual([
      { field: 'exchangeRate.rate', message: 'must be a positive decimal with at most 6 decimal places' },
    ]);
  });

  it('refuses numbers, more than 6 places and anything that is no plain decimal', () => {
    for (const rate of ['1.0867001', '1e3', '1,0867', ' 1.08', '.5', '1.', 'NaN', 'Infinity', '']) {
      expect(refusal({ rate, date: TODAY, source: 'manual' }), rate).toEqual([
        { field: 'exchangeRate.rate', message: 'must be a positive decimal with at most 6 decimal places' },
      ]);
    }
    expect(refusal({ rate: 1.0867, date: TODAY, source: 'manual' })?.[0]).toMatchObject({ field: 'exchangeRate.rate', message: /decimal string/ });
    expect(refusal({ date: TODAY, source: 'manual' })?.[0]).toMatchObject({ field: 'exchangeRate.rate' });
  });

  it('refuses a date in the future relative to today, and one that is no date, naming exchangeRate.date', () => {
    expect(refusal({ rate: '1.08', date: '2026-11-28', source: 'manual' })).toEqual([
      { field: 'exchangeRate.date', message: 'must not be in the future (after 2026-11-27)' },
    ]);
    for (const date of ['2026-02-30', '27.11.2026', '2026-11-27T00:00:00Z', undefined, 20261127]) {
      expect(refusal({ rate: '1.08', date, source: 'manual' }), String(date)).toEqual([{ field: 'exchangeRate.date', message: 'must be a date (YYYY-MM-DD)' }]);
    }
  });

  it('names every bad field at once, and refuses a source other than manual', () => {
    expect(refusal({ rate: '0', date: '2027-01-01', source: 'ecb' })?.map((d) => d.field)).toEqual([
      'exchangeRate.source',
      'exchangeRate.rate',
      'exchangeRate.date',
    ]);
    expect(refusal(null)).toEqual([{ field: 'exchangeRate', message: 'must be an object { rate, date, source }' }]);
    expect(refusal('1.08')?.[0].field).toBe('exchangeRate');
  });
});

describe('toEur', () => {
  it('divides by the rate per EUR and rounds half-up to the cent', () => {
    expect(toEur('1086.70', '1.0867')).toBe('1000.00');
    expect(toEur('100.00', '1.0867')).toBe('92.02'); // 92.0217…
    expect(toEur('16185', '161.85')).toBe('100.00');
    // 0.125 exactly: a tie rounds up (away from zero), for credit notes too.
    expect(toEur('0.25', '2')).toBe('0.13');
    expect(toEur('-0.25', '2')).toBe('-0.13');
    expect(toEur('0.00', '1.0867')).toBe('0.00');
    expect(toEur('-0.001', '1')).toBe('0.00');
  });

  it('refuses a rate of zero or below instead of dividing by it', () => {
    expect(() => toEur('10.00', '0')).toThrow(RangeError);
    expect(() => toEur('10.00', '-1.08')).toThrow(RangeError);
    expect(() => toEur('10.00', 'abc')).toThrow(TypeError);
  });

  it('equals amount / rate rounded half-up, for any amount and rate (property)', () => {
    const cents = fc.bigInt({ min: -(10n ** 13n), max: 10n ** 13n }).map((c) => new Decimal(c.toString()).div(100).toFixed(2));
    const rates = fc.bigInt({ min: 1n, max: 10n ** 11n }).map((r) => new Decimal(r.toString()).div(1_000_000).toFixed());
    fc.assert(
      fc.property(cents, rates, (amount, rate) => {
        const exact = new Decimal(amount).div(rate);
        const eur = new Decimal(toEur(amount, rate));
        // Within half a cent of the exact quotient, and a tie goes away from zero.
        expect(eur.minus(exact).abs().lte('0.005')).toBe(true);
        expect(eur.toFixed(2)).toBe(
          exact
            .toDecimalPlaces(2, Decimal.ROUND_HALF_UP)
            .toFixed(2)
            .replace(/^-0\.00$/, '0.00'),
        );
      }),
    );
  });
});

describe('published rates', () => {
  it('isExchangeRate: positive decimals with at most 6 places', () => {
    expect(['1.0867', '0.85623', '161.85', '15551.64', '1', '0.000001'].every(isExchangeRate)).toBe(true);
    expect(['0', '0.0', '-1', '1.0000001', '1e2', '', ' 1'].some(isExchangeRate)).toBe(false);
    expect(isExchangeRate(1.08)).toBe(false);
  });

  it('ecbRateProblem names what is wrong with one rate', () => {
    expect(ecbRateProblem({ currency: 'USD', date: '2026-11-20', rate: '1.0867' })).toBeNull();
    expect(ecbRateProblem({ currency: 'EUR', date: '2026-11-20', rate: '1' })).toMatch(/currency "EUR"/);
    expect(ecbRateProblem({ currency: 'usd', date: '2026-11-20', rate: '1' })).toMatch(/currency "usd"/);
    expect(ecbRateProblem({ currency: 'USD', date: '2026-13-01', rate: '1' })).toMatch(/day "2026-13-01" of USD/);
    expect(ecbRateProblem({ currency: 'USD', date: '2026-11-20', rate: 'N/A' })).toBe(
      'rate "N/A" of USD on 2026-11-20 is not a positive decimal with at most 6 places',
    );
  });
});
