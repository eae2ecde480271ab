import { UnrecoverableError } from 'bullmq';
import { storeExchangeRates } from '../../../shared/commands/exchangeRates';
import { config } from '../../../shared/config';
import { db } from '../../../shared/db';
import { logger } from '../../../shared/logger';
import { EcbFeedError, fetchEcbRates } from '../../../shared/providers/ecb';

/**
 * Fetch the ECB rates feed and store it in one transaction: a feed refused anywhere stores nothing.
 * A feed that is not what the ECB publishes fails for good (the next daily run fetches anew);
 * network, time limit and HTTP 5xx are retried with the queue's backoff. Failures are logged by the
 * worker's "job failed" / "job attempt failed" line, with the feed error's message.
 */
export async function fetchEcbRatesJob() {
  const { ratesUrl, timeoutMs } = config().ecb;
  if (!ratesUrl) return { skipped: 'ECB_RATES_URL is empty' };
  let rates: Awaited<ReturnType<typeof fetchEcbRates>>;
  try {
    rates = await fetchEcbRates({ url: ratesUrl, timeoutMs });
  } catch (err) {
    if (err instanceof EcbFeedError && !err.transient) throw new UnrecoverableError(err.message);
    throw err;
  }
  const stored = await db().transaction((trx) => storeExchangeRates({ trx }, rates));
  const days = new Set(rates.map((r) => r.date));
  const latest = [...days].sort().at(-1);
  logger.info({ days: days.size, rates: rates.length, ...stored, latest }, 'ECB rates stored');
  return { days: days.size, rates: rates.length, ...stored, latest };
}
