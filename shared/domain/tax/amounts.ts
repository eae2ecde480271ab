import Decimal from 'decimal.js';
import { taxReportError } from './errors';

/**
 * Decimal helpers for the tax reports. Money comes in and goes out as decimal strings; all
 * arithmetic is decimal.js (never JS numbers). "Half-up" is decimal.js ROUND_HALF_UP, which rounds
 * a tie away from zero, so a credit note rounds exactly like the invoice it reverses.
 */
export const D = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP });
export type Dec = InstanceType<typeof D>;

const DECIMAL_RE = /^-?\d{1,15}(\.\d{1,6})?$/;

/** Parse a decimal string ("1234.5", "-0.10"); anything else (floats, "1e3", "") is refused. */
export function dec(value: string, field: string): Dec {
  if (typeof value !== 'string' || !DECIMAL_RE.test(value.trim())) {
    throw taxReportError('INVALID_AMOUNT', `${field} must be a decimal string, got ${JSON.stringify(value)}`, [
      { field, message: 'must be a decimal string such as "1234.50"' },
    ]);
  }
  return new D(value.trim());
}

/** Exactly two places, half-up: "1234.50", "-0.01", "0.00" (never "-0.00"). */
export function money(value: Dec): string {
  const s = value.toDecimalPlaces(2, D.ROUND_HALF_UP).toFixed(2);
  return s === '-0.00' ? '0.00' : s;
}

/** Canonical form of a tax rate string: "20.00" -> "20", "4.90" -> "4.9". */
export function normalizeRate(rate: string, field = 'taxRate'): string {
  const d = dec(rate, field);
  if (d.isNegative() || d.greaterThan(100)) {
    throw taxReportError('UNSUPPORTED_TAX_RATE', `${field} ${rate} is not a VAT rate`, [{ field, message: 'must be between 0 and 100' }]);
  }
  return d.toString();
}

/** Tax on a base at a percentage rate, rounded half-up to the cent. */
export function taxOn(base: Dec, rate: string): Dec {
  return base.times(rate).dividedBy(100).toDecimalPlaces(2, D.ROUND_HALF_UP);
}

/** Sum net amounts per normalised rate, preserving first-seen order. */
export function sumByRate(rows: ReadonlyArray<{ taxRate: string; net: string }>, field = 'salesByRate'): Map<string, Dec> {
  const out = new Map<string, Dec>();
  rows.forEach((row, i) => {
    const rate = normalizeRate(row.taxRate, `${field}[${i}].taxRate`);
    const net = dec(row.net, `${field}[${i}].net`);
    out.set(rate, (out.get(rate) ?? new D(0)).plus(net));
  });
  return out;
}
