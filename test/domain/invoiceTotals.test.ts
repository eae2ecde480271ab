import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Decimal } from 'decimal.js';
import { computeTotals, amountDue, applyPayment, decimalTotals } from '../../shared/domain/invoiceTotals';
import { fmtMoney, fmtQuantity, fmtRate, isValidQuantity, dec, quantityNumber } from '../../shared/domain/money';
import { AppError } from '../../shared/errors';

const sum = (xs: string[]) => xs.reduce((a, x) => a.plus(x), new Decimal(0));

describe('computeTotals: examples', () => {
  it('rounds half-up per line net, then taxes per rate group on the summed net', () => {
    // 3 × 0.335 is not allowed (2 places), but 3 × 3.35 = 10.05; 0.5 × 0.05 = 0.025 → 0.03
    const t = computeTotals([
      { quantity: '0.5', unitPrice: '0.05', taxRate: '20' },
      { quantity: 3, unitPrice: '3.35', taxRate: '20' },
      { quantity: '1', unitPrice: '100.00', taxRate: '10' },
    ]);
    expect(t.lines.map((l) => l.netAmount)).toEqual(['0.03', '10.05', '100.00']);
    expect(t.taxBreakdown).toEqual([
      { taxRate: '10', net: '100.00', tax: '10.00' },
      { taxRate: '20', net: '10.08', tax: '2.02' }, // 10.08 × 0.2 = 2.016 → 2.02
    ]);
    expect(t).toMatchObject({ totalNet: '110.08', totalTax: '12.02', totalGross: '122.10' });
  });

  it('group tax on the summed net differs from the sum of rounded line taxes; line taxes are allocated to match', () => {
    // three lines of 0.05 at 10 %: each line's own tax 0.005 → 0.01 (sum 0.03), group tax 0.15 × 0.1 = 0.015 → 0.02
    const t = computeTotals(Array.from({ length: 3 }, () => ({ quantity: 1, unitPrice: '0.05', taxRate: '10' })));
    expect(t.taxBreakdown).toEqual([{ taxRate: '10', net: '0.15', tax: '0.02' }]);
    expect(t.lines.map((l) => l.taxAmount)).toEqual(['0.01', '0.00', '0.01']);
    expect(sum(t.lines.map((l) => l.taxAmount)).toFixed(2)).toBe('0.02');
    expect(t.totalGross).toBe('0.17');
  });

  it('keeps canonical formats: rates "20", quantities without trailing zeros, money with 2 places', () => {
    const t = computeTotals([{ quantity: '2.5000', unitPrice: '10', taxRate: '20.00' }]);
    expect(t.lines[0]).toMatchObject({ quantity: '2.5', unitPrice: '10.00', taxRate: '20', netAmount: '25.00', taxAmount: '5.00', grossAmount: '30.00' });
  });

  it('discount lines (negative unit price) reduce the group', () => {
    const t = computeTotals([
      { quantity: 1, unitPrice: '100.00', taxRate: '20' },
      { quantity: 1, unitPrice: '-10.00', taxRate: '20' },
    ]);
    expect(t).toMatchObject({ totalNet: '90.00', totalTax: '18.00', totalGross: '108.00' });
  });

  it('amountDue never goes below zero', () => {
    expect(amountDue('100.00', '30.00')).toBe('70.00');
    expect(amountDue('100.00', '100.00')).toBe('0.00');
    expect(amountDue('100.00', '120.00')).toBe('0.00');
  });
});

describe('money helpers', () => {
  it('formats half-up and never "-0.00"', () => {
    expect(fmtMoney('1.005')).toBe('1.01');
    expect(fmtMoney('-1.005')).toBe('-1.01');
    expect(fmtMoney('-0.001')).toBe('0.00');
    expect(fmtMoney(0.1 + 0.2)).toBe('0.30');
    expect(fmtQuantity('1.23456')).toBe('1.2346');
    expect(fmtRate('7.00')).toBe('7');
  });
  it('quantities: > 0 and at most 4 places', () => {
    expect(isValidQuantity('1.2345')).toBe(true);
    expect(isValidQuantity(0.5)).toBe(true);
    expect(isValidQuantity('1.23456')).toBe(false);
    expect(isValidQuantity('0')).toBe(false);
    expect(isValidQuantity(-1)).toBe(false);
    expect(isValidQuantity('1e3')).toBe(false);
    expect(isValidQuantity(Number.NaN)).toBe(false);
  });
  it('refuses non-decimals', () => {
    expect(() => dec('1e3')).toThrow();
    expect(() => dec('abc')).toThrow();
  });
  it('the string fast paths agree with decimal.js on every decimal string', () => {
    // Database text ("12.50", "2.0000", "20.00") takes a string-only path; a Decimal argument
    // always takes the decimal.js path, so the two can be compared value by value.
    const decimalText = fc
      .tuple(
        fc.constantFrom('', '-'),
        fc.oneof(fc.constant('0'), fc.stringMatching(/^[1-9][0-9]{0,13}$/), fc.stringMatching(/^0[0-9]{1,3}$/)),
        fc.oneof(fc.constant(''), fc.stringMatching(/^\.[0-9]{1,6}$/)),
      )
      .map(([sign, int, frac]) => sign + int + frac);
    fc.assert(
      fc.property(decimalText, (s) => {
        const d = new Decimal(s);
        expect(fmtMoney(s)).toBe(fmtMoney(d));
        if (!d.isNegative()) {
          expect(fmtQuantity(s)).toBe(fmtQuantity(d));
          expect(fmtRate(s)).toBe(fmtRate(d));
        }
      }),
      { numRuns: 5000 },
    );
    expect(fmtMoney('-0.00')).toBe('0.00');
    expect(fmtQuantity('2.0000')).toBe('2');
    expect(fmtQuantity('10')).toBe('10');
    expect(fmtRate('20.00')).toBe('20');
    expect(fmtRate('5.50')).toBe('5.5');
  });
});

// Arbitraries: money with 2 places (cents), quantities with up to 4 places, AT/DE rates.
const cents = fc.integer({ min: -1_000_000, max: 100_000_000 });
const qty = fc.integer({ min: 1, max: 100_000_000 }).map((n) => new Decimal(n).dividedBy(10_000).toFixed());
const rate = fc.constantFrom('0', '7', '10', '13', '19', '20');
const line = fc.record({
  quantity: fc.oneof(qty, fc.integer({ min: 1, max: 1000 })),
  unitPrice: cents.map((c) => new Decimal(c).dividedBy(100).toFixed(2)),
  taxRate: rate,
});

describe('computeTotals: properties', () => {
  it('totals reconcile to the cent', () => {
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 40 }), (lines) => {
        const t = computeTotals(lines);
        // Σ line nets = totalNet
        expect(sum(t.lines.map((l) => l.netAmount)).toFixed(2)).toBe(t.totalNet);
        // Σ group nets = totalNet, Σ group taxes = totalTax
        expect(sum(t.taxBreakdown.map((g) => g.net)).toFixed(2)).toBe(t.totalNet);
        expect(sum(t.taxBreakdown.map((g) => g.tax)).toFixed(2)).toBe(t.totalTax);
        // totalNet + totalTax = totalGross; Σ line gross = totalGross
        expect(new Decimal(t.totalNet).plus(t.totalTax).toFixed(2)).toBe(t.totalGross);
        expect(sum(t.lines.map((l) => l.grossAmount)).toFixed(2)).toBe(t.totalGross);
        for (const g of t.taxBreakdown) {
          const groupLines = t.lines.filter((l) => l.taxRate === g.taxRate);
          // line taxes of a group add up to the group tax, and each is within 1 cent of its own share
          expect(sum(groupLines.map((l) => l.taxAmount)).toFixed(2)).toBe(g.tax);
          for (const l of groupLines) {
            const own = new Decimal(l.netAmount).times(l.taxRate).dividedBy(100);
            expect(own.minus(l.taxAmount).abs().lessThanOrEqualTo('0.01')).toBe(true);
          }
          // group tax = half-up(group net × rate)
          expect(new Decimal(g.net).times(g.taxRate).dividedBy(100).toDecimalPlaces(2, Decimal.ROUND_HALF_UP).toFixed(2)).toBe(g.tax);
        }
        // every amount has exactly two places
        for (const v of [t.totalNet, t.totalTax, t.totalGross, ...t.lines.flatMap((l) => [l.netAmount, l.taxAmount, l.grossAmount])]) {
          expect(v).toMatch(/^-?\d+\.\d{2}$/);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('line net = half-up(quantity × unitPrice) and the result does not depend on float input', () => {
    fc.assert(
      fc.property(line, (l) => {
        const t = computeTotals([l]);
        const exact = new Decimal(String(l.quantity)).times(l.unitPrice).toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
        expect(t.lines[0].netAmount).toBe(fmtMoney(exact.toFixed(2)));
      }),
      { numRuns: 300 },
    );
  });

  it('is deterministic and independent of line order for the totals', () => {
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 20 }), (lines) => {
        const a = computeTotals(lines);
        const b = computeTotals([...lines].reverse());
        expect(b.totalNet).toBe(a.totalNet);
        expect(b.totalTax).toBe(a.totalTax);
        expect(b.totalGross).toBe(a.totalGross);
        expect(b.taxBreakdown).toEqual(a.taxBreakdown);
      }),
      { numRuns: 200 },
    );
  });
});

// computeTotals takes integer arithmetic (BigInt cents) where it is exact and decimal.js
// (decimalTotals) elsewhere: both must give the same result, or throw the same error, for any input.
const outcome = (f: () => unknown) => {
  try {
    return { ok: f() };
  } catch (err) {
    return { error: `${(err as Error).name}: ${(err as Error).message}` };
  }
};
const digits = (min: number, max: number) => fc.stringMatching(new RegExp(`^[0-9]{${min},${max}}$`));
const anyDecimalText = fc
  .tuple(
    fc.constantFrom('', '', '', '-'),
    digits(1, 20),
    fc.oneof(
      fc.constant(''),
      digits(1, 8).map((d) => `.${d}`),
    ),
    fc.constantFrom('', '', '', ' '),
  )
  .map(([sign, int, frac, pad]) => `${pad}${sign}${int}${frac}${pad}`);
const anyQuantity = fc.oneof(
  qty,
  anyDecimalText,
  fc.integer({ min: -1000, max: 1_000_000 }),
  fc.double({ noNaN: false }),
  fc.constantFrom(0.1, 1e-7, 1e21, 2.5e-3, -0, '1e3', '', 'abc', '1.', '.5'),
);
const anyPrice = fc.oneof(
  cents.map((c) => new Decimal(c).dividedBy(100).toFixed(2)),
  anyDecimalText,
  fc.constantFrom('0', '-0.00', '0.005', '-0.005', '1.005', '99999999999999999999999999999999.99', '12,50', ''),
);
const anyRate = fc.oneof(rate, fc.constantFrom('5.5', '7.25', '20.00', ' 20 ', '0.00', '100', '-3', '33.333333', 'x'), anyDecimalText);

describe('computeTotals: integer arithmetic equals decimal.js', () => {
  it('on valid and arbitrary lines alike (same totals, or the same error)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(line, fc.record({ quantity: anyQuantity, unitPrice: anyPrice, taxRate: anyRate })), { minLength: 1, maxLength: 30 }),
        (lines) => {
          expect(outcome(() => computeTotals(lines as never))).toEqual(outcome(() => decimalTotals(lines as never)));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('at the edges: ties either way, -0, huge values beyond the exact range', () => {
    const cases = [
      [{ quantity: '1', unitPrice: '0.005', taxRate: '20' }],
      [{ quantity: '1', unitPrice: '-0.005', taxRate: '20' }],
      [{ quantity: '-0', unitPrice: '-0.004', taxRate: '10' }],
      [
        { quantity: 3, unitPrice: '0.05', taxRate: '10' },
        { quantity: 1, unitPrice: '-0.05', taxRate: '10' },
      ],
      [{ quantity: '99999999999999999999', unitPrice: '99999999999999999999.99', taxRate: '20' }],
      [{ quantity: '1'.repeat(40), unitPrice: '1', taxRate: '20' }],
      Array.from({ length: 200 }, (_, i) => ({ quantity: '9999999999.9999', unitPrice: '999999999999.99', taxRate: i % 2 ? '20' : '5.5' })),
    ];
    for (const lines of cases) expect(outcome(() => computeTotals(lines))).toEqual(outcome(() => decimalTotals(lines)));
  });
});

describe('quantityNumber: the JSON number the API returns', () => {
  it('is exact for every valid quantity (≤ 10 integer, ≤ 4 decimal digits): it prints and parses back unchanged', () => {
    const anyQuantity = fc
      .tuple(fc.bigInt({ min: 0n, max: 9_999_999_999n }), fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 4 }))
      .map(([int, frac, places]) => `${int}${places ? `.${String(frac).padStart(4, '0').slice(0, places)}` : ''}`)
      .filter((q) => new Decimal(q).greaterThan(0));
    fc.assert(
      fc.property(anyQuantity, (q) => {
        const n = quantityNumber(q);
        expect(JSON.stringify(n)).toBe(fmtQuantity(q));
        expect(fmtQuantity(n)).toBe(fmtQuantity(q));
        expect(isValidQuantity(n)).toBe(true);
      }),
      { numRuns: 2000 },
    );
    expect(quantityNumber('2.5000')).toBe(2.5);
    expect(JSON.stringify([quantityNumber('0.0001'), quantityNumber('9999999999.9999'), quantityNumber('0.3')])).toBe('[0.0001,9999999999.9999,0.3]');
  });
});

describe('applyPayment: properties over random invoices and payment sequences', () => {
  // A payable invoice: random lines whose total is not negative (a negative total is refused on create).
  const invoiceTotal = fc
    .array(line, { minLength: 1, maxLength: 10 })
    .map((lines) => computeTotals(lines).totalGross)
    .filter((g) => !dec(g).isNegative());
  // Payments: mostly small, some around and above what is due, in cents.
  const payment = fc
    .oneof(fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 1, max: 2_000_000_000 }))
    .map((c) => new Decimal(c).dividedBy(100).toFixed(2));

  it('amountPaid + amountDue = totalGross, amountDue ≥ 0, and a payment above amountDue is refused (422) without effect', () => {
    fc.assert(
      fc.property(invoiceTotal, fc.array(payment, { maxLength: 30 }), fc.array(fc.boolean(), { maxLength: 30 }), (totalGross, payments, payExactlyDue) => {
        let paid = '0.00';
        let due = amountDue(totalGross, paid);
        const attempts = payments.map((p, i) => (payExactlyDue[i] && dec(due).greaterThan(0) ? due : p));
        for (const amount of attempts) {
          due = amountDue(totalGross, paid);
          if (dec(amount).greaterThan(due)) {
            let err: unknown;
            try {
              applyPayment(totalGross, paid, amount);
            } catch (e) {
              err = e;
            }
            expect(err).toBeInstanceOf(AppError);
            expect(err).toMatchObject({ status: 422, code: 'UNPROCESSABLE', extra: { amountDue: due } });
            continue; // refused: nothing changes
          }
          const r = applyPayment(totalGross, paid, amount);
          expect(r.amountPaid).toBe(fmtMoney(dec(paid).plus(amount)));
          paid = r.amountPaid;
          expect(r.amountDue).toBe(amountDue(totalGross, paid));
          expect(r.fullyPaid).toBe(dec(r.amountDue).isZero());
        }
        const finalDue = amountDue(totalGross, paid);
        expect(dec(finalDue).isNegative()).toBe(false);
        expect(dec(paid).plus(finalDue).toFixed(2)).toBe(totalGross);
        expect(dec(paid).lessThanOrEqualTo(totalGross)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('refuses a zero, negative or sub-cent amount (400) whatever is due', () => {
    for (const amount of ['0', '0.00', '-1.00', '0.001']) {
      expect(() => applyPayment('100.00', '0.00', amount)).toThrow(expect.objectContaining({ status: 400, code: 'INVALID_INPUT' }));
    }
    expect(applyPayment('100.00', '99.99', '0.01')).toEqual({ amountPaid: '100.00', amountDue: '0.00', fullyPaid: true });
    expect(() => applyPayment('100.00', '99.99', '0.02')).toThrow(expect.objectContaining({ status: 422 }));
  });
});
