import { invalidInput, type ErrorDetail } from '../errors';
import { isValidDate } from './dates';
import { D, dec, fmtMoney, fmtRate, type Dec } from './money';

/**
 * Exchange rates as the ECB quotes them: units of the currency per 1 EUR (USD 1.0867 means
 * 1 EUR = 1.0867 USD), kept as decimal strings end to end. docs/exchange-rates.md.
 */
export type ExchangeRateSource = 'ecb' | 'manual';

/** The rate an invoice uses: its value, the day it is the rate of, and where it came from. */
export interface ExchangeRate {
  rate: string;
  date: string;
  source: ExchangeRateSource;
}

/** One published ECB rate: a currency's rate on one day. */
export interface EcbRate {
  currency: string;
  date: string;
  rate: string;
}

/**
 * At most 6 decimal places: the ECB quotes five significant digits (GBP 0.85623, JPY 161.85), the
 * BMF's monthly averages (AT § 20 Abs. 6 UStG) four or five decimals; 6 leaves room and matches
 * the column (numeric(18,6)). Twelve integer digits cover any currency per euro.
 */
export const EXCHANGE_RATE_RE = /^\d{1,12}(\.\d{1,6})?$/;

/** ISO 4217 code of a currency other than the euro (the ECB quotes the others against it). */
export const FOREIGN_CURRENCY_RE = /^(?!EUR$)[A-Z]{3}$/;

/** Whether a value is an exchange rate we accept: a decimal string > 0 with at most 6 places. */
export function isExchangeRate(v: unknown): v is string {
  return typeof v === 'string' && EXCHANGE_RATE_RE.test(v) && dec(v).greaterThan(0);
}

/** A rate as stored text comes back ("1.086700") in its canonical form ("1.0867"). */
export const fmtExchangeRate = (v: string | Dec): string => fmtRate(v);

/**
 * A rate the user enters instead of the ECB's (`source: 'manual'`, e.g. the BMF monthly average
 * that AT § 20 Abs. 6 UStG allows). Refused with 400 INVALID_INPUT naming the field: a rate that
 * is no positive decimal string (numbers are refused, floats are not money), a date that is not a
 * calendar date or lies after `today` (no rate is published in advance).
 */
export function validateManualExchangeRate(input: unknown, today: string, field = 'exchangeRate'): ExchangeRate {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw invalidInput('Exchange rate failed validation', [{ field, message: 'must be an object { rate, date, source }' }]);
  }
  const { rate, date, source } = input as Record<string, unknown>;
  const details: ErrorDetail[] = [];
  if (source !== 'manual') details.push({ field: `${field}.source`, message: "must be 'manual' (ECB rates are looked up, not entered)" });
  if (typeof rate !== 'string') {
    details.push({ field: `${field}.rate`, message: 'must be a decimal string, e.g. "1.0867" (units of the currency per EUR)' });
  } else if (!EXCHANGE_RATE_RE.test(rate)) {
    details.push({ field: `${field}.rate`, message: 'must be a positive decimal with at most 6 decimal places' });
  } else if (!dec(rate).greaterThan(0)) {
    details.push({ field: `${field}.rate`, message: 'must be greater than 0' });
  }
  if (!isValidDate(date)) {
    details.push({ field: `${field}.date`, message: 'must be a date (YYYY-MM-DD)' });
  } else if (date > today) {
    details.push({ field: `${field}.date`, message: `must not be in the future (after ${today})` });
  }
  if (details.length) throw invalidInput('Exchange rate failed validation', details);
  return { rate: fmtExchangeRate(rate as string), date: date as string, source: 'manual' };
}

/**
 * An amount in the foreign currency converted to EUR with a rate quoted per EUR: amount / rate,
 * rounded half-up to the cent (docs/money.md). Negative amounts (credit notes) round away from
 * zero on a tie, as every other amount does.
 */
export function toEur(amount: string | Dec, rate: string | Dec): string {
  const r = dec(rate);
  if (!r.greaterThan(0)) throw new RangeError(`exchange rate must be greater than 0 (got ${r.toFixed()})`);
  return fmtMoney(dec(amount).div(r).toDecimalPlaces(2, D.ROUND_HALF_UP));
}

/**
 * Why a published rate cannot be stored (an unknown currency code, a day that is no date, a rate
 * that is no positive decimal), or null. The feed's parser and the store both ask: what reaches
 * the table has passed it whatever the caller.
 */
export function ecbRateProblem(r: EcbRate): string | null {
  if (typeof r.currency !== 'string' || !FOREIGN_CURRENCY_RE.test(r.currency)) return `currency ${JSON.stringify(r.currency)} is not a foreign ISO 4217 code`;
  if (!isValidDate(r.date)) return `day ${JSON.stringify(r.date)} of ${r.currency} is not a date (YYYY-MM-DD)`;
  if (!isExchangeRate(r.rate)) return `rate ${JSON.stringify(r.rate)} of ${r.currency} on ${r.date} is not a positive decimal with at most 6 places`;
  return null;
}

/**
 * How many days back the last published rate may lie: the ECB publishes every TARGET business
 * day, and its longest pause (Easter, Christmas) leaves four days without a rate. An older rate
 * means the feed stopped or the ECB no longer quotes the currency (e.g. RUB since March 2022):
 * the user enters the rate instead.
 */
export const ECB_MAX_GAP_DAYS = 7;
