import { ecbRateProblem, type EcbRate } from '../domain/exchangeRates';
import type { CommandContext } from './types';

export interface StoredExchangeRates {
  /** Rows new to the table. */
  inserted: number;
  /** Rows whose rate the ECB changed since they were stored. */
  updated: number;
}

/**
 * Stores published ECB rates (docs/exchange-rates.md). Public reference data, no tenant's: it takes
 * the caller's transaction only (no actor, no audit row). An upsert on (currency, rate_date) that
 * writes only what differs, so a re-run or a second delivery of the same job changes nothing.
 * Every rate is checked first: one bad rate throws and the caller's transaction stores none.
 */
export async function storeExchangeRates(ctx: Pick<CommandContext, 'trx'>, rates: readonly EcbRate[]): Promise<StoredExchangeRates> {
  for (const r of rates) {
    const problem = ecbRateProblem(r);
    if (problem) throw new Error(`Exchange rate refused: ${problem}`);
  }
  if (rates.length === 0) return { inserted: 0, updated: 0 };
  // Bulk upsert, hand-written: one statement and one parameter (json) for the 90-day file's ~2,700 rows.
  const { rows } = await ctx.trx.raw<{ rows: Array<{ inserted: boolean }> }>(
    `insert into exchange_rates as e (currency, rate_date, rate, source, fetched_at)
     select x.currency, x.date::date, x.rate::numeric, 'ecb', now()
       from json_to_recordset(?::json) as x(currency text, date text, rate text)
     on conflict (currency, rate_date) do update
        set rate = excluded.rate, source = excluded.source, fetched_at = excluded.fetched_at
      where e.rate <> excluded.rate
     returning (xmax = 0) as inserted`,
    [JSON.stringify(rates.map(({ currency, date, rate }) => ({ currency, date, rate })))],
  );
  const inserted = rows.filter((r) => r.inserted).length;
  return { inserted, updated: rows.length - inserted };
}
