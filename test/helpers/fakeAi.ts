import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A local OpenAI-compatible chat completions server that records requests and answers as told. */
export interface FakeAi {
  url: string;
  requests: { headers: http.IncomingHttpHeaders; body: any }[];
  reply: (r: { status?: number; content?: string; delayMs?: number; raw?: string }) => void;
  close: () => Promise<void>;
}

export async function startFakeAi(): Promise<FakeAi> {
  let next: { status?: number; content?: string; delayMs?: number; raw?: string } = { content: '## Leistungsumfang\n\n- Punkt' };
  const requests: FakeAi['requests'] = [];
  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => {
      requests.push({ headers: req.headers, body: data ? JSON.parse(data) : null });
      const answer = () => {
        if (req.url !== '/v1/chat/completions') {
          res.writeHead(404).end();
          return;
        }
        res.writeHead(next.status ?? 200, { 'content-type': 'application/json' });
        res.end(
          next.raw ??
            JSON.stringify({ id: 'cmpl-1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: next.content } }] }),
        );
      };
      if (next.delayMs) setTimeout(answer, next.delayMs);
      else answer();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    reply: (r) => (next = r),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
