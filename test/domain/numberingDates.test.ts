import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { defaultNumberFormat, formatInvoiceNumber, numberFormatsCanCollide, parseInvoiceNumber } from '../../shared/domain/numbering';
import { addDays, isValidDate, todayIn, todayVienna, wallClockIn } from '../../shared/domain/dates';
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

describe('number formats of two types: numberFormatsCanCollide', () => {
  it('the defaults and formats that differ in letters, or in a fixed digit before the counter, never collide', () => {
    const [re, an, gs] = (['rechnung', 'angebot', 'gutschrift'] as const).map(defaultNumberFormat);
    for (const [a, b] of [
      [re, an],
      [re, gs],
      [an, gs],
    ])
      expect(numberFormatsCanCollide(a, b)).toBe(false);
    expect(numberFormatsCanCollide('R{YY}{MM}-{NNNN}', '{YYYY}/AN/{NNN}')).toBe(false);
    expect(numberFormatsCanCollide('1{YY}{NNNN}', '2{YY}{NNNN}')).toBe(false);
    expect(numberFormatsCanCollide('{YYYY}{NNNN}1', '{YYYY}{NNNN}2')).toBe(false);
  });

  it('refuses formats that can give the same string, including by a counter growing past its width', () => {
    expect(numberFormatsCanCollide('{YYYY}-{NNNN}', '{YYYY}-{NNNN}')).toBe(true);
    // 2026-0001 (4 N) and 2026-0001 (3 N: counter 1 is 001, but counter 1000 is 1000): same set of strings from 1000 on.
    expect(numberFormatsCanCollide('{YYYY}-{NNNN}', '{YYYY}-{NNN}')).toBe(true);
    // Literal text differs, yet RE-0011-2026 is counter 11 of the first and counter 1 (001) + "1" of the second.
    expect(numberFormatsCanCollide('RE-{NNNN}-{YYYY}', 'RE-{NNN}1-{YYYY}')).toBe(true);
    expect(numberFormatsCanCollide('{YY}{NNNN}', '{YYYY}{NNNN}')).toBe(true);
  });

  // Soundness against the languages themselves: when two formats are accepted together, no number
  // of the first (any year, month and counter, also past its width) matches the second's pattern.
  it('accepted pairs never share a number (property)', () => {
    const LITERALS = ['A', 'R', '-', '/', '.', '0', '1', '2', '{YYYY}', '{YY}', '{MM}'];
    const tokens = (max: number) => fc.array(fc.constantFrom(...LITERALS), { maxLength: max });
    const format = fc.tuple(tokens(4), fc.integer({ min: 3, max: 5 }), tokens(3)).map(([head, n, tail]) => [...head, `{${'N'.repeat(n)}}`, ...tail]);
    /** The second format's whole language: only the first of each placeholder is one, as in formatInvoiceNumber. */
    const language = (toks: string[]) => {
      const seen = new Set<string>();
      const parts = toks.map((t) => {
        const placeholder = t.startsWith('{') && !seen.has(t);
        seen.add(t);
        if (!placeholder) return t.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
        if (t.startsWith('{N')) return `\\d{${t.length - 2},}`;
        return `\\d{${t === '{YYYY}' ? 4 : 2}}`;
      });
      return new RegExp(`^${parts.join('')}$`);
    };
    fc.assert(
      fc.property(
        format,
        format,
        fc.integer({ min: 2000, max: 2099 }),
        fc.integer({ min: 1, max: 12 }),
        fc.oneof(
          fc.integer({ min: 1, max: 120 }),
          fc.integer({ min: 990, max: 1_100 }),
          fc.integer({ min: 9_990, max: 10_100 }),
          fc.integer({ min: 1, max: 2_000_000 }),
        ),
        (a, b, year, month, counter) => {
          const [pa, pb] = [a.join(''), b.join('')];
          if (numberFormatsCanCollide(pa, pb)) return;
          expect(numberFormatsCanCollide(pb, pa)).toBe(false);
          expect(language(b).test(formatInvoiceNumber('rechnung', year, counter, pa, month))).toBe(false);
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe('dates', () => {
  it('today in Vienna crosses the year before UTC does', () => {
    expect(todayVienna(new Date('2026-12-31T23:30:00Z'))).toBe('2027-01-01');
    expect(todayVienna(new Date('2026-06-30T21:59:00Z'))).toBe('2026-06-30');
  });
  it('today, formatted once per second and zone, is the formatter’s day for any sequence of instants and zones', () => {
    // Instants around Vienna's midnights and DST changes, a millisecond apart, and zones whose
    // offsets are not whole hours or were whole seconds (Vienna's LMT before 1893).
    const fresh = (zone: string, t: number) =>
      new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(t));
    const edges = ['2026-12-31T23:00:00Z', '2026-03-29T00:59:59.999Z', '2026-10-24T22:00:00Z', '1890-06-01T22:54:39Z'].map(Date.parse);
    const instant = fc.oneof(
      fc.constantFrom(...edges).chain((e) => fc.integer({ min: -1500, max: 1500 }).map((d) => e + d)),
      fc.integer({ min: Date.parse('1880-01-01'), max: Date.parse('2100-01-01') }),
    );
    const zone = fc.constantFrom('Europe/Vienna', 'Europe/Berlin', 'Asia/Kathmandu', 'America/St_Johns', 'UTC');
    fc.assert(
      fc.property(fc.array(fc.tuple(zone, instant), { minLength: 1, maxLength: 30 }), (calls) => {
        for (const [z, t] of calls) expect(todayIn(z, new Date(t))).toBe(fresh(z, t));
      }),
      { numRuns: 300 },
    );
  });
  it('adds days across months and leap years', () => {
    expect(addDays('2028-02-20', 14)).toBe('2028-03-05');
    expect(addDays('2026-12-25', 14)).toBe('2027-01-08');
    expect(isValidDate('2026-02-29')).toBe(false);
    expect(isValidDate('2028-02-29')).toBe(true);
  });
  it('wall clock of an instant in a time zone: the local day and hour, midnight as 00, summer time', () => {
    expect(wallClockIn('Europe/Vienna', new Date('2026-12-31T23:30:05Z'))).toEqual({
      year: '2027',
      month: '01',
      day: '01',
      hour: '00',
      minute: '30',
      second: '05',
    });
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
