import { Decimal } from 'decimal.js';

/**
 * Money arithmetic for invoices. Amounts travel as decimal strings ("1234.50") from the request
 * to the database (numeric(14,2)) and back; in between they are decimal.js values, never JS
 * floats. Rounding is ROUND_HALF_UP (a tie goes away from zero), the commercial rounding
 * expected in AT/DE and by EN 16931.
 */
export const D = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP });
export type Dec = InstanceType<typeof D>;

export const MONEY_RE = /^-?\d{1,12}(\.\d{1,2})?$/;
export const QUANTITY_RE = /^\d{1,10}(\.\d{1,4})?$/;
export const DECIMAL_RE = /^-?\d{1,12}(\.\d{1,4})?$/;

export const ZERO = new D(0);

/** Parse a decimal string or a finite number (as written in JSON). Throws on anything else. */
export function dec(value: string | number | Dec): Dec {
  if (value instanceof D) return value as Dec;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`not a finite number: ${value}`);
    // String(n) is the shortest round-tripping form, so 1.5 becomes "1.5", not 1.4999….
    return new D(String(value));
  }
  if (typeof value !== 'string' || !/^-?\d+(\.\d+)?$/.test(value.trim())) {
    throw new TypeError(`not a decimal string: ${JSON.stringify(value)}`);
  }
  return new D(value.trim());
}

/** Round half-up to the cent. */
export const roundMoney = (v: Dec): Dec => v.toDecimalPlaces(2, D.ROUND_HALF_UP);

/**
 * Fast paths for the text PostgreSQL sends for numeric columns ("1234.50", "2.0000", "20.00"):
 * already canonical apart from trailing zeros, so no decimal.js object is needed: an invoice read
 * formats ~40 of them (docs/benchmarks.md). Anything else takes the decimal.js path; a property
 * test checks both agree.
 */
const CANONICAL_CENTS_RE = /^-?(?:0|[1-9]\d*)\.\d\d$/;
const CANONICAL_UNSIGNED_RE = /^(?:0|[1-9]\d*)(?:\.\d+)?$/;

/** "20.00" → "20", "1.5000" → "1.5", "7" → "7": drops a fraction's trailing zeros (and its dot). */
function withoutTrailingZeros(s: string): string {
  if (!s.includes('.')) return s;
  let end = s.length;
  while (s.charCodeAt(end - 1) === 48 /* 0 */) end--;
  if (s.charCodeAt(end - 1) === 46 /* . */) end--;
  return s.slice(0, end);
}

/** Exactly two places, half-up: "1234.50", "-0.01", "0.00" (never "-0.00"). */
export function fmtMoney(v: string | number | Dec): string {
  if (typeof v === 'string' && CANONICAL_CENTS_RE.test(v)) return v === '-0.00' ? '0.00' : v;
  const s = roundMoney(dec(v)).toFixed(2);
  return s === '-0.00' ? '0.00' : s;
}

/** A quantity with at most four places and no trailing zeros: "2", "1.5", "0.3333". */
export function fmtQuantity(v: string | number | Dec): string {
  // At most four places: more would need rounding.
  if (typeof v === 'string' && CANONICAL_UNSIGNED_RE.test(v) && !/\.\d{5}/.test(v)) return withoutTrailingZeros(v);
  return dec(v).toDecimalPlaces(4, D.ROUND_HALF_UP).toFixed();
}

/**
 * A quantity as the JSON number the API returns (the spec types Item.quantity as number). Exact:
 * at most 14 significant digits, and every decimal of ≤ 15 converts to a double that prints back
 * unchanged. Arithmetic never uses the number; writers turn it back with fmtQuantity() / dec().
 */
export function quantityNumber(v: string | number | Dec): number {
  return Number(fmtQuantity(v));
}

/** Canonical tax rate: "20.00" → "20", "7.0" → "7", "5.50" → "5.5". */
export function fmtRate(v: string | number | Dec): string {
  if (typeof v === 'string' && CANONICAL_UNSIGNED_RE.test(v)) return withoutTrailingZeros(v);
  return dec(v).toFixed();
}

/** Whether a string/number is a quantity we accept: > 0 with at most 4 decimal places. */
export function isValidQuantity(v: unknown): boolean {
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return false;
    v = String(v);
  }
  return typeof v === 'string' && QUANTITY_RE.test(v) && dec(v).greaterThan(0);
}

export const sumMoney = (values: Array<string | Dec>): Dec => values.reduce<Dec>((acc, v) => acc.plus(dec(v)), ZERO);
export const moneyEquals = (a: string | Dec, b: string | Dec): boolean => dec(a).equals(dec(b));
