import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from '../../helpers/processes';

/** One request a test receiver got, as it arrived (the raw body is what the signature covers). */
export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: string;
  body: { id: string; type: string; createdAt: string; tenantId: string; data: { object: Record<string, unknown> } };
}

/** How the receiver answers: a status (and headers), or `hold` to take the request and never answer. */
export type Answer = { status: number; headers?: Record<string, string>; body?: string } | 'hold';

/**
 * A real HTTP receiver on 127.0.0.1 (allow-listed through OUTBOUND_WEBHOOKS_ALLOW_TARGETS), which
 * records every request and answers from a script: `answers` are used in order, then `otherwise`.
 */
export async function startReceiver(otherwise: Answer = { status: 204 }) {
  const received: Received[] = [];
  const answers: Answer[] = [];
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      received.push({ path: req.url ?? '/', headers: req.headers, raw, body: JSON.parse(raw) });
      const answer = answers.shift() ?? otherwise;
      if (answer === 'hold') {
        held.push(res);
        return;
      }
      res.writeHead(answer.status, answer.headers ?? {});
      res.end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    hostPort: `127.0.0.1:${port}`,
    url: (p = '/hook') => `http://127.0.0.1:${port}${p}`,
    received,
    answers,
    ofType: (type: string) => received.filter((r) => r.body.type === type),
    releaseHeld: () => {
      for (const res of held.splice(0)) res.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of held.splice(0)) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/**
 * The verification code exactly as docs/outbound-webhooks.md prints it (its ```js verify-webhook
 * block), written to a file and imported: the test proves the documented code, not a copy.
 */
export async function documentedVerifier(): Promise<(rawBody: string, header: string, secret: string, tolerance?: number) => boolean> {
  const doc = readFileSync(path.join(repoRoot, 'docs/outbound-webhooks.md'), 'utf8');
  const code = /```js verify-webhook\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!code) throw new Error('docs/outbound-webhooks.md has no ```js verify-webhook block');
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'verify-webhook-')), 'verify.mjs');
  writeFileSync(file, code);
  const mod = await import(pathToFileURL(file).href);
  return mod.verifyWebhook;
}
