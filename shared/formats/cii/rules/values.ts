/** Decimal and date values as the Schematron's XPath reads them (xs:decimal, format 102). */
import Decimal from 'decimal.js';

const XSD_DECIMAL_RE = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

export function num(s: string | undefined): Decimal | null {
  if (s === undefined) return null;
  const t = s.trim();
  if (!XSD_DECIMAL_RE.test(t)) return null;
  return new Decimal(t);
}

/** XPath `round(x * 100) div 100`: half-up towards positive infinity. */
export function round2(d: Decimal): Decimal {
  return d.toDecimalPlaces(2, Decimal.ROUND_HALF_CEIL);
}

/** XPath `round(x)`. */
export function round0(d: Decimal): Decimal {
  return d.toDecimalPlaces(0, Decimal.ROUND_HALF_CEIL);
}

export function decimals(s: string | undefined): number {
  if (s === undefined) return 0;
  const i = s.trim().indexOf('.');
  return i < 0 ? 0 : s.trim().length - i - 1;
}

export const sum = (values: Decimal[]) => values.reduce((a, b) => a.plus(b), new Decimal(0));

const DATE_102_RE = /^(\d{4})(\d{2})(\d{2})$/;

export function validDate102(s: string | undefined): boolean {
  if (!s) return false;
  const m = DATE_102_RE.exec(s.trim());
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}
