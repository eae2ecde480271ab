import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * The ECB's euro reference rates XML as eurofxref-daily.xml and eurofxref-hist-90d.xml publish it
 * (single-quoted attributes, the gesmes envelope, newest day first), built from the days given.
 */
export type FeedDays = Record<string, Record<string, string>>;

export function ecbFeed(days: FeedDays, opts: { prolog?: string } = {}): string {
  const cubes = Object.entries(days)
    .sort(([a], [b]) => b.localeCompare(a))
    .map(
      ([time, rates]) =>
        `\t\t<Cube time='${time}'>\n${Object.entries(rates)
          .map(([currency, rate]) => `\t\t\t<Cube currency='${currency}' rate='${rate}'/>`)
          .join('\n')}\n\t\t</Cube>`,
    )
    .join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>
${opts.prolog ?? ''}<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
\t<gesmes:subject>Reference rates</gesmes:subject>
\t<gesmes:Sender>
\t\t<gesmes:name>European Central Bank</gesmes:name>
\t</gesmes:Sender>
\t<Cube>
${cubes}
\t</Cube>
</gesmes:Envelope>
`;
}

/** How the fake ECB answers the next request: a body, or a raw handler (never answer, stream forever, …). */
export type FeedResponse = string | ((req: http.IncomingMessage, res: http.ServerResponse) => void);

export interface FeedServer {
  url: string;
  respond: FeedResponse;
  requests: number;
  close: () => Promise<void>;
}

/** A local HTTP server that plays the ECB; `respond` may be changed between requests. */
export async function startFeedServer(respond: FeedResponse): Promise<FeedServer> {
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    feed.requests++;
    const r = feed.respond;
    if (typeof r === 'function') return r(req, res);
    res.writeHead(200, { 'Content-Type': 'text/xml' });
    res.end(r);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const feed: FeedServer = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/stats/eurofxref/eurofxref-hist-90d.xml`,
    respond,
    requests: 0,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return feed;
}

/** Accepts the request and never answers (a hung server or a dead route). */
export const neverAnswer: FeedResponse = () => undefined;

/** Streams a well-formed start of a feed, then padding, without Content-Length, until the client hangs up. */
export const endlessBody: FeedResponse = (_req, res) => {
  res.writeHead(200, { 'Content-Type': 'text/xml' });
  res.write('<?xml version="1.0" encoding="UTF-8"?><gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01"><!-- ');
  const chunk = 'x'.repeat(64 * 1024);
  const pump = () => {
    while (!res.destroyed && res.write(chunk));
    if (!res.destroyed) res.once('drain', pump);
  };
  res.on('close', () => res.removeAllListeners('drain'));
  pump();
};

/** A DOCTYPE whose external entity would read a local file if the parser expanded it. */
export const XXE_PROLOG = '<!DOCTYPE gesmes:Envelope [ <!ENTITY xxe SYSTEM "file:///etc/passwd"> ]>\n';

/** Nested internal entities that expand exponentially ("billion laughs"). */
export const LAUGHS_PROLOG = `<!DOCTYPE gesmes:Envelope [ <!ENTITY lol "lol"> ${Array.from(
  { length: 9 },
  (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i || ''};`.repeat(10)}">`,
).join(' ')} ]>\n`;
