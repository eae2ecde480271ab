import pino from 'pino';
import { randomUUID } from 'node:crypto';
import { QueueEvents } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { config, reloadConfig } from '../../shared/config';
import { db } from '../../shared/db';
import { jobs } from '../../shared/jobs/catalog';
import { logger } from '../../shared/logger';
import { exchangeRateOn } from '../../shared/queries/exchangeRates';
import { getQueue, QUEUES } from '../../shared/queues';
import { createRedis } from '../../shared/redis';
import { scheduleRecurringJobs, startWorkers, type RunningWorkers } from '../../workers/worker';
import { waitUntil } from '../helpers/waitUntil';
import { ecbFeed, endlessBody, LAUGHS_PROLOG, neverAnswer, startFeedServer, XXE_PROLOG, type FeedServer } from '../providers/ecb/feed';

/**
 * The ECB rates feed end to end (docs/exchange-rates.md): a real worker on Redis runs
 * fetch-ecb-rates against a local server that plays the ECB, and the rates land in PostgreSQL —
 * all of a feed or, for a hostile or broken one, none, with the job failed and a log line that
 * says why. exchange_rates is shared by the test files that run in parallel: this one clears and
 * reads only the days of its own feed; a worker starts with no recent rate (the feed's week is
 * more than ECB_MAX_GAP_DAYS before today), so it fetches at once.
 */
type Line = Record<string, unknown> & { msg: string; level: number };
const lines: Line[] = [];
const stream = (logger as unknown as Record<symbol, { write: (s: string) => boolean }>)[pino.symbols.streamSym];
const levelBefore = logger.level;
const ERROR = 50;

// Wednesday to Friday of one week; the 21st and 22nd are a weekend.
const WEEK = {
  '2026-11-18': { USD: '1.0820', JPY: '160.90', GBP: '0.85410', CHF: '0.9390' },
  '2026-11-19': { USD: '1.0850', JPY: '161.20', GBP: '0.85500', CHF: '0.9402' },
  '2026-11-20': { USD: '1.0867', JPY: '161.85', GBP: '0.85623', CHF: '0.9415' },
};
// Monday: a day the feed has not stored yet, which no refused feed may store.
const MONDAY = '2026-11-23';

let feed: FeedServer;
let running: RunningWorkers | undefined;
let events: QueueEvents;
const envBefore = { url: process.env.ECB_RATES_URL, timeout: process.env.ECB_TIMEOUT_MS };

// Other test files store rates of other days (test/api/invoices/exchangeRate.test.ts): this file
// reads and clears only the days of its feed, up to the Monday after it.
const OWN_DAYS = ['2026-11-18', MONDAY] as const;
const ownRates = () => db()('exchangeRates').whereBetween('rateDate', [...OWN_DAYS]);
const allRates = () => ownRates().orderBy(['currency', 'rateDate']).select('currency', 'rateDate', 'rate', 'source', 'fetchedAt');

beforeAll(async () => {
  logger.level = 'info';
  vi.spyOn(stream, 'write').mockImplementation((chunk: string) => {
    for (const raw of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(raw));
    return true;
  });
  feed = await startFeedServer(ecbFeed(WEEK));
  process.env.ECB_RATES_URL = feed.url;
  process.env.ECB_TIMEOUT_MS = '1000';
  reloadConfig();
  await ownRates().delete();
  events = new QueueEvents(QUEUES.maintenance, { connection: createRedis('worker'), prefix: config().redisPrefix });
  await events.waitUntilReady();
});

afterAll(async () => {
  await running?.close();
  await events?.close();
  await feed?.close();
  vi.restoreAllMocks();
  logger.level = levelBefore;
  for (const [name, value] of [
    ['ECB_RATES_URL', envBefore.url],
    ['ECB_TIMEOUT_MS', envBefore.timeout],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  reloadConfig();
});

/** Runs the job once more through the worker (its own id: the start-up run's id is the day's). */
async function runJob(opts: { attempts?: number } = {}) {
  const jobId = `ecb-test-${randomUUID()}`;
  const job = await getQueue(QUEUES.maintenance).add(jobs.fetchEcbRates.name, {}, { jobId, ...opts });
  return { jobId, job };
}

const failureLines = (jobId: string) => lines.filter((l) => l.jobId === jobId && /job (attempt )?failed/.test(l.msg));

describe('fetch-ecb-rates', () => {
  it('before any fetch there is no rate at all: the lookup answers null', async () => {
    expect(await exchangeRateOn(db(), 'USD', '2026-11-20')).toBeNull();
  });

  it('a worker that starts with no rate stored fetches the feed at once, and schedules the daily run', async () => {
    running = await startWorkers({ queues: [QUEUES.maintenance], relay: false });
    const startupJobId = jobs.fetchEcbRates.jobId({});
    const job = await waitUntil(() => getQueue(QUEUES.maintenance).getJob(startupJobId), 'the start-up run to be queued');
    expect(await job.waitUntilFinished(events, 60_000)).toEqual({ days: 3, rates: 12, inserted: 12, updated: 0, latest: '2026-11-20' });
    expect(feed.requests).toBe(1);

    const rows = await allRates();
    expect(rows).toHaveLength(12);
    expect(rows.every((r) => r.source === 'ecb')).toBe(true);
    // Decimal strings as published, never floats (numeric(18,6) pads; the lookup gives them back canonical).
    expect(rows.find((r) => r.currency === 'GBP' && r.rateDate === '2026-11-20')?.rate).toBe('0.856230');
    expect(lines.some((l) => l.msg === 'ECB rates stored' && l.inserted === 12)).toBe(true);

    // Weekdays at 16:30 Berlin time, after the ECB publishes at about 16:00 CET.
    const schedulers = await getQueue(QUEUES.maintenance).getJobSchedulers();
    expect(schedulers.find((s) => s.key === 'fetch-ecb-rates-daily')).toMatchObject({
      name: 'fetch-ecb-rates',
      pattern: '30 16 * * 1-5',
      tz: 'Europe/Berlin',
    });
  });

  it('a re-run of the same feed changes nothing; a rate the ECB corrected is updated', async () => {
    const before = await allRates();
    const { job } = await runJob();
    expect(await job.waitUntilFinished(events, 60_000)).toMatchObject({ rates: 12, inserted: 0, updated: 0 });
    expect(await allRates()).toEqual(before);

    feed.respond = ecbFeed({ ...WEEK, '2026-11-20': { ...WEEK['2026-11-20'], USD: '1.0868' } });
    const again = await runJob();
    expect(await again.job.waitUntilFinished(events, 60_000)).toMatchObject({ inserted: 0, updated: 1 });
    expect((await exchangeRateOn(db(), 'USD', '2026-11-20'))?.rate).toBe('1.0868');
    feed.respond = ecbFeed(WEEK);
    const back = await runJob();
    expect(await back.job.waitUntilFinished(events, 60_000)).toMatchObject({ inserted: 0, updated: 1 });
  });

  it('the rate of a day is that day’s; on a weekend it is Friday’s, with Friday’s date', async () => {
    expect(await exchangeRateOn(db(), 'USD', '2026-11-19')).toEqual({ currency: 'USD', rate: '1.085', date: '2026-11-19', source: 'ecb' });
    const friday = { currency: 'GBP', rate: '0.85623', date: '2026-11-20', source: 'ecb' };
    expect(await exchangeRateOn(db(), 'GBP', '2026-11-20')).toEqual(friday);
    expect(await exchangeRateOn(db(), 'GBP', '2026-11-21')).toEqual(friday);
    expect(await exchangeRateOn(db(), 'GBP', '2026-11-22')).toEqual(friday);
  });

  it('no rate at all is null: a currency the ECB does not quote, a day before the feed, a day long after it', async () => {
    expect(await exchangeRateOn(db(), 'RUB', '2026-11-20')).toBeNull();
    expect(await exchangeRateOn(db(), 'USD', '2026-11-17')).toBeNull();
    // The feed stopped (or the ECB stopped quoting): a rate older than a week is no day's rate.
    expect((await exchangeRateOn(db(), 'USD', '2026-11-27'))?.date).toBe('2026-11-20');
    expect(await exchangeRateOn(db(), 'USD', '2026-11-28')).toBeNull();
  });

  describe('a hostile or broken feed stores nothing and fails the job with a log line that says why', () => {
    const cases: Array<{ name: string; respond: FeedServer['respond']; attempts?: number; err: RegExp }> = [
      {
        name: 'a DOCTYPE with an external entity',
        respond: ecbFeed({ ...WEEK, [MONDAY]: { USD: '&xxe;' } }, { prolog: XXE_PROLOG }),
        err: /^ECB rates feed refused: it declares a DOCTYPE or entities/,
      },
      {
        name: 'nested entities (billion laughs)',
        respond: ecbFeed({ ...WEEK, [MONDAY]: { USD: '&lol9;' } }, { prolog: LAUGHS_PROLOG }),
        err: /^ECB rates feed refused: it declares a DOCTYPE or entities/,
      },
      { name: 'a body larger than the limit', respond: endlessBody, err: /^ECB rates feed is larger than the limit of 4194304 bytes$/ },
      {
        name: 'a rate that is no decimal, beside good ones',
        respond: ecbFeed({ ...WEEK, [MONDAY]: { USD: '1.0901', JPY: '162.10', GBP: '0,85700' } }),
        err: /^ECB rates feed is malformed: rate "0,85700" of GBP on 2026-11-23 is not a positive decimal/,
      },
      {
        name: 'a server that never answers (one attempt here; a real run retries with backoff)',
        respond: neverAnswer,
        attempts: 1,
        err: /^ECB rates feed did not answer within the time limit of 1000 ms$/,
      },
    ];

    for (const c of cases) {
      it(c.name, async () => {
        const before = await allRates();
        feed.respond = c.respond;
        const { jobId } = await runJob(c.attempts ? { attempts: c.attempts } : {});
        const [line] = await waitUntil(
          async () => {
            const found = failureLines(jobId);
            return found.length ? found : null;
          },
          `the failure of ${jobId} to be logged`,
          60_000,
          50,
        );
        // Failed for good at its first attempt: the refusal is the final "job failed" line, at error.
        expect(line).toMatchObject({ level: ERROR, msg: 'job failed', job: 'fetch-ecb-rates', queue: 'maintenance', attempt: 1 });
        expect(String(line.err)).toMatch(c.err);
        expect(await getQueue(QUEUES.maintenance).getJobState(jobId)).toBe('failed');
        expect(await allRates()).toEqual(before);
        expect(await exchangeRateOn(db(), 'USD', MONDAY)).toMatchObject({ date: '2026-11-20' });
        feed.respond = ecbFeed(WEEK);
      });
    }
  });

  it('ECB_RATES_URL empty: no daily run, and a queued run fetches nothing', async () => {
    process.env.ECB_RATES_URL = '';
    reloadConfig();
    try {
      await scheduleRecurringJobs();
      const keys = (await getQueue(QUEUES.maintenance).getJobSchedulers()).map((s) => s.key);
      expect(keys).not.toContain('fetch-ecb-rates-daily');
      expect(keys).toContain('purge-sent-outbox-daily');
      const requests = feed.requests;
      const { job } = await runJob();
      expect(await job.waitUntilFinished(events, 60_000)).toEqual({ skipped: 'ECB_RATES_URL is empty' });
      expect(feed.requests).toBe(requests);
    } finally {
      process.env.ECB_RATES_URL = feed.url;
      reloadConfig();
    }
  });
});
