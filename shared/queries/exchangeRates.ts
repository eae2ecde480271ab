import type { Db } from '../db';
import { addDays } from '../domain/dates';
import { ECB_MAX_GAP_DAYS, fmtExchangeRate, type ExchangeRate } from '../domain/exchangeRates';

/** An ECB rate as looked up: the currency, and `date` the day it was published (may precede the day asked for). */
export interface EcbExchangeRate extends ExchangeRate {
  currency: string;
  source: 'ecb';
}

/**
 * The ECB rate of `currency` on `date` (YYYY-MM-DD): that day's, or on a day without one (weekend,
 * TARGET holiday) the last published before it, as the ECB's own rule says, with its actual date.
 * null when there is none within ECB_MAX_GAP_DAYS (the feed was never reached, has stopped, or the
 * ECB does not quote the currency): the user enters the rate then.
 */
export async function exchangeRateOn(db: Db, currency: string, date: string): Promise<EcbExchangeRate | null> {
  const row: { rateDate: string; rate: string } | undefined = await db('exchangeRates')
    .where('currency', currency)
    .where('rateDate', '<=', date)
    .where('rateDate', '>=', addDays(date, -ECB_MAX_GAP_DAYS))
    .orderBy('rateDate', 'desc')
    .first('rateDate', 'rate');
  return row ? { currency, rate: fmtExchangeRate(row.rate), date: row.rateDate, source: 'ecb' } : null;
}

/**
 * Whether a rate published in the ECB_MAX_GAP_DAYS before `today` is stored: a worker that starts
 * without one (a new installation, or workers down longer than that) fetches the feed at once.
 */
export async function hasRecentExchangeRates(db: Db, today: string): Promise<boolean> {
  return Boolean(await db('exchangeRates').where('rateDate', '>=', addDays(today, -ECB_MAX_GAP_DAYS)).first(db.raw('1 as present')));
}
