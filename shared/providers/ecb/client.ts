import { BodyTooLargeError, readBoundedText } from '../boundedBody';
import type { EcbRate } from '../../domain/exchangeRates';
import { EcbFeedError } from './errors';
import { parseEcbRates } from './parser';

/**
 * Fetches the ECB euro reference rates feed (ECB_RATES_URL, docs/exchange-rates.md). The URL is
 * operator configuration; what comes back is still treated as untrusted: bounded in time (connect
 * and body together) and in size, then parsed without DOCTYPE or entities (./parser.ts).
 */
export interface EcbClientOptions {
  url: string;
  /** Bound on the whole request, connect to last byte (ECB_TIMEOUT_MS). */
  timeoutMs: number;
  maxBytes?: number;
  fetch?: typeof fetch;
}

/**
 * The 90-day file is about 150 kB, the daily one 2 kB. 4 MiB leaves room for a longer history
 * file and stops a server that streams without end before it fills the worker's memory.
 */
export const ECB_MAX_FEED_BYTES = 4 * 1024 * 1024;

/** The feed's text, or EcbFeedError (TIMEOUT, NETWORK, HTTP_ERROR, TOO_LARGE). */
export async function fetchEcbFeed(opts: EcbClientOptions): Promise<string> {
  const limit = opts.maxBytes ?? ECB_MAX_FEED_BYTES;
  const signal = AbortSignal.timeout(opts.timeoutMs);
  const failed = (err: unknown): EcbFeedError => {
    if (err instanceof EcbFeedError) return err;
    if (signal.aborted || (err as { name?: string })?.name === 'TimeoutError') {
      return new EcbFeedError(`ECB rates feed did not answer within the time limit of ${opts.timeoutMs} ms`, { code: 'TIMEOUT', transient: true });
    }
    return new EcbFeedError(`ECB rates feed could not be reached: ${(err as Error)?.message ?? 'network error'}`, {
      code: 'NETWORK',
      transient: true,
      cause: err,
    });
  };
  let res: Response;
  try {
    res = await (opts.fetch ?? fetch)(opts.url, { headers: { Accept: 'application/xml, text/xml' }, signal });
  } catch (err) {
    throw failed(err);
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => undefined);
    const transient = res.status >= 500 || res.status === 408 || res.status === 429;
    throw new EcbFeedError(`ECB rates feed answered HTTP ${res.status}`, { code: 'HTTP_ERROR', transient });
  }
  try {
    return await readBoundedText(res, limit);
  } catch (err) {
    if (err instanceof BodyTooLargeError)
      throw new EcbFeedError(`ECB rates feed is larger than the limit of ${limit} bytes`, { code: 'TOO_LARGE', transient: false });
    throw failed(err);
  }
}

/** Fetch and parse: every rate of the feed, or EcbFeedError and nothing. */
export async function fetchEcbRates(opts: EcbClientOptions): Promise<EcbRate[]> {
  return parseEcbRates(await fetchEcbFeed(opts));
}
