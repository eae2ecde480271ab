import Decimal from 'decimal.js';

/**
 * Money conversion for provider payloads. Pure; no floats anywhere: minor units go through
 * decimal.js, decimal strings are validated and re-formatted, never parsed into a JS number.
 */

// Own precision so a long minor-unit integer never loses a digit whatever the global Decimal config is.
const D = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP });

/**
 * ISO 4217 minor-unit exponents that differ from 2 (https://www.six-group.com/en/products-services/
 * financial-information/data-standards.html, list one). Everything else has 2.
 */
const ISO_EXPONENT: Readonly<Record<string, number>> = Object.freeze({
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
  CLF: 4,
  UYW: 4,
});

/** Upper-cased ISO 4217 code, or null when the value is not a three-letter code. */
export function normalizeCurrency(code: unknown): string | null {
  if (typeof code !== 'string' || !/^[A-Za-z]{3}$/.test(code)) return null;
  return code.toUpperCase();
}

/** The ISO 4217 exponent: JPY 0, EUR 2, KWD 3. Unknown (but well-formed) codes get 2. */
export function currencyExponent(currency: string): number {
  const code = normalizeCurrency(currency);
  if (!code) throw new RangeError(`not a currency code: ${JSON.stringify(currency)}`);
  return ISO_EXPONENT[code] ?? 2;
}

/** Places an amount in this currency is written with: 2, or the exponent when it is larger. */
export function amountPlaces(currency: string, exponent = currencyExponent(currency)): number {
  return Math.max(2, exponent);
}

/**
 * Minor units → decimal string: (1234, 'EUR') → "12.34"; (500, 'JPY') → "500.00";
 * (1234, 'KWD') → "1.234". `exponent` overrides ISO for providers that deviate (Stripe's ISK).
 * Exact: the result always has enough places for the currency, so nothing is rounded.
 */
export function minorToDecimal(minor: number | string | bigint, currency: string, exponent = currencyExponent(currency)): string {
  let digits: string;
  if (typeof minor === 'number') {
    if (!Number.isSafeInteger(minor)) throw new RangeError(`minor units must be a safe integer (got ${minor})`);
    digits = String(minor);
  } else if (typeof minor === 'bigint') {
    digits = minor.toString();
  } else {
    if (!/^-?\d{1,30}$/.test(minor)) throw new RangeError(`minor units must be an integer string (got ${JSON.stringify(minor)})`);
    digits = minor;
  }
  if (!Number.isInteger(exponent) || exponent < 0 || exponent > 8) throw new RangeError(`bad exponent ${exponent}`);
  return new D(digits).div(new D(10).pow(exponent)).toFixed(amountPlaces(currency, exponent));
}

/**
 * A provider's decimal string ("30.0", "2.51", "100") → our format ("30.00", "2.51", "100.00").
 * Throws RangeError when the value is not a plain decimal or has more significant places than
 * the currency allows, because that would need rounding money.
 */
export function decimalToAmount(value: unknown, currency: string): string {
  if (typeof value !== 'string' || !/^-?\d{1,20}(\.\d{1,12})?$/.test(value)) {
    throw new RangeError(`not a decimal amount: ${JSON.stringify(value)}`);
  }
  const places = amountPlaces(currency);
  const d = new D(value);
  if (d.decimalPlaces() > places) {
    throw new RangeError(`${value} has more decimal places than ${currency.toUpperCase()} allows (${places})`);
  }
  return d.toFixed(places);
}
