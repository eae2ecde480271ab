import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ECB_MAX_FEED_BYTES, EcbFeedError, fetchEcbFeed, fetchEcbRates, parseEcbRates } from '../../../shared/providers/ecb';
import { ecbFeed, endlessBody, LAUGHS_PROLOG, neverAnswer, startFeedServer, XXE_PROLOG, type FeedServer } from './feed';

/**
 * The ECB rates feed client (shared/providers/ecb): the ECB's XML format parsed into decimal
 * strings, and everything else refused as a whole with an EcbFeedError that says why and whether
 * trying again can help. The ECB is a local HTTP server serving XML built here.
 */
const DAYS = {
  '2026-11-19': { USD: '1.0850', JPY: '161.20', GBP: '0.85500' },
  '2026-11-20': { USD: '1.0867', JPY: '161.85', GBP: '0.85623' },
};

function refusedWith(fn: () => unknown): EcbFeedError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(EcbFeedError);
    return err as EcbFeedError;
  }
  throw new Error('accepted');
}

describe('parseEcbRates', () => {
  it('reads every day and currency as decimal strings, exactly as published', () => {
    expect(parseEcbRates(ecbFeed(DAYS))).toEqual([
      { currency: 'USD', date: '2026-11-20', rate: '1.0867' },
      { currency: 'JPY', date: '2026-11-20', rate: '161.85' },
      { currency: 'GBP', date: '2026-11-20', rate: '0.85623' },
      { currency: 'USD', date: '2026-11-19', rate: '1.0850' },
      { currency: 'JPY', date: '2026-11-19', rate: '161.20' },
      { currency: 'GBP', date: '2026-11-19', rate: '0.85500' },
    ]);
  });

  it('reads the daily file (one day) and double-quoted attributes alike', () => {
    const xml = ecbFeed({ '2026-11-20': { USD: '1.0867' } }).replace(/'/g, '"');
    expect(parseEcbRates(xml)).toEqual([{ currency: 'USD', date: '2026-11-20', rate: '1.0867' }]);
  });

  it('refuses a DOCTYPE, with or without entities, before parsing', () => {
    for (const prolog of [XXE_PROLOG, LAUGHS_PROLOG, '<!doctype gesmes:Envelope>\n']) {
      const err = refusedWith(() => parseEcbRates(ecbFeed({ '2026-11-20': { USD: '&xxe;' } }, { prolog })));
      expect(err).toMatchObject({ code: 'DOCTYPE', transient: false });
      expect(err.message).toBe('ECB rates feed refused: it declares a DOCTYPE or entities, which the ECB never sends');
    }
  });

  it('refuses the whole feed for one rate that is no positive decimal', () => {
    for (const [rate, shown] of [
      ['1,0867', '"1,0867"'],
      ['1.0867e0', '"1.0867e0"'],
      ['0', '"0"'],
      ['-1.08', '"-1.08"'],
      ['', '""'],
      ['&amp;', '"&amp;"'],
      ['1.08670001', '"1.08670001"'],
    ]) {
      const err = refusedWith(() => parseEcbRates(ecbFeed({ ...DAYS, '2026-11-23': { USD: '1.09', GBP: rate } })));
      expect(err).toMatchObject({ code: 'MALFORMED', transient: false });
      expect(err.message).toBe(`ECB rates feed is malformed: rate ${shown} of GBP on 2026-11-23 is not a positive decimal with at most 6 places`);
    }
  });

  it('refuses bad days and codes, duplicates, an empty feed and what is not the ECB format', () => {
    const malformed = (xml: string) => {
      const err = refusedWith(() => parseEcbRates(xml));
      expect(err.code).toBe('MALFORMED');
      return err.message.replace('ECB rates feed is malformed: ', '');
    };
    expect(malformed(ecbFeed({ '2026-11-31': { USD: '1.08' } }))).toBe('day "2026-11-31" of USD is not a date (YYYY-MM-DD)');
    expect(malformed(ecbFeed({ '2026-11-20': { EUR: '1' } }))).toBe('currency "EUR" is not a foreign ISO 4217 code');
    expect(malformed(ecbFeed({ '2026-11-20': { usd: '1.08' } }))).toBe('currency "usd" is not a foreign ISO 4217 code');
    expect(malformed(ecbFeed(DAYS).replace("time='2026-11-19'", "time='2026-11-20'"))).toBe('USD is listed twice on 2026-11-20');
    expect(malformed(ecbFeed({}))).toBe('it lists no rates');
    expect(malformed('<html><body>Maintenance</body></html>')).toBe('no gesmes:Envelope');
    expect(malformed(ecbFeed(DAYS).replace('</gesmes:Envelope>', ''))).toMatch(/^not well-formed XML/);
    expect(malformed('')).toMatch(/^not well-formed XML|^no gesmes:Envelope/);
    expect(malformed(ecbFeed(DAYS).replace("<Cube time='2026-11-20'>", '<Cube>'))).toBe('a day Cube has no time');
  });
});

describe('fetchEcbFeed / fetchEcbRates against a local server', () => {
  let server: FeedServer;
  beforeAll(async () => {
    server = await startFeedServer(ecbFeed(DAYS));
  });
  afterAll(async () => {
    await server.close();
  });
  const fetchIt = (timeoutMs = 2000, maxBytes?: number) => fetchEcbRates({ url: server.url, timeoutMs, maxBytes });
  const refused = async (p: Promise<unknown>) => {
    const err = await p.then(
      () => new Error('accepted'),
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(EcbFeedError);
    return err as EcbFeedError;
  };

  it('fetches and parses the feed', async () => {
    server.respond = ecbFeed(DAYS);
    expect(await fetchIt()).toHaveLength(6);
  });

  it('a server that never answers fails at the time limit, as transient', async () => {
    server.respond = neverAnswer;
    const started = Date.now();
    const err = await refused(fetchIt(300));
    expect(err).toMatchObject({ code: 'TIMEOUT', transient: true, message: 'ECB rates feed did not answer within the time limit of 300 ms' });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('a body that stops half-way fails at the time limit too', async () => {
    server.respond = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/xml' });
      res.write(ecbFeed(DAYS).slice(0, 100));
    };
    expect(await refused(fetchIt(300))).toMatchObject({ code: 'TIMEOUT', transient: true });
  });

  it('a body larger than the limit is refused, declared or streamed', async () => {
    server.respond = endlessBody;
    const streamed = await refused(fetchIt(30_000));
    expect(streamed).toMatchObject({ code: 'TOO_LARGE', transient: false, message: `ECB rates feed is larger than the limit of ${ECB_MAX_FEED_BYTES} bytes` });
    server.respond = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/xml', 'Content-Length': String(ECB_MAX_FEED_BYTES + 1) });
      res.write('<');
    };
    expect(await refused(fetchIt())).toMatchObject({ code: 'TOO_LARGE' });
    server.respond = ecbFeed(DAYS);
    expect(await refused(fetchIt(2000, 100))).toMatchObject({ code: 'TOO_LARGE', message: 'ECB rates feed is larger than the limit of 100 bytes' });
  });

  it('HTTP errors: 5xx, 408 and 429 may pass, others not', async () => {
    for (const [status, transient] of [
      [503, true],
      [429, true],
      [404, false],
      [403, false],
    ] as const) {
      server.respond = (_req, res) => {
        res.writeHead(status);
        res.end('no');
      };
      expect(await refused(fetchIt())).toMatchObject({ code: 'HTTP_ERROR', transient, message: `ECB rates feed answered HTTP ${status}` });
    }
  });

  it('a server that is not there is a transient network failure', async () => {
    const gone = await startFeedServer('');
    const url = gone.url;
    await gone.close();
    expect(await refused(fetchEcbFeed({ url, timeoutMs: 2000 }))).toMatchObject({ code: 'NETWORK', transient: true });
  });

  it('a hostile feed served over HTTP is refused like the parser refuses it', async () => {
    server.respond = ecbFeed({ '2026-11-20': { USD: '&xxe;' } }, { prolog: XXE_PROLOG });
    expect(await refused(fetchIt())).toMatchObject({ code: 'DOCTYPE' });
  });
});
