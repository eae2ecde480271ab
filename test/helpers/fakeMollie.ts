import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for the parts of the Mollie API v2 the mollie adapter calls:
 *   GET /v2/payments/:id            (honours ?embed=refunds unless embedSupported = false)
 *   GET /v2/payments/:id/refunds
 * Seeded from tests; checks `Authorization: Bearer <apiKey>`; answers errors in Mollie's
 * application/hal+json error shape. Listens on 127.0.0.1, port 0.
 */
type Json = Record<string, unknown>;

export interface FakeMollie {
  baseUrl: string;
  apiKey: string;
  setPayment(payment: Json): void;
  addRefund(paymentId: string, refund: Json): void;
  /** Forget all payments, refunds and recorded requests; clear failWith/delay; embed back on. */
  reset(): void;
  /** Answer every request with this status (e.g. 500, 503, 429) until set back to null. */
  failWith: number | null;
  /** Wait this long before answering (to provoke client timeouts). */
  delayMs: number;
  /** false: ignore ?embed=refunds, as an API version without the embed would. */
  embedSupported: boolean;
  requests: Array<{ path: string; authorization: string | undefined }>;
  close(): Promise<void>;
}

const HAL = { 'content-type': 'application/hal+json' };

export async function startFakeMollie(opts: { apiKey?: string } = {}): Promise<FakeMollie> {
  const apiKey = opts.apiKey ?? 'test_fakeMollieKey000000000000000';
  const payments = new Map<string, Json>();
  const refunds = new Map<string, Json[]>();
  const state = { failWith: null as number | null, delayMs: 0, embedSupported: true };
  const requests: FakeMollie['requests'] = [];

  const error = (status: number, title: string, detail: string) =>
    JSON.stringify({ status, title, detail, _links: { documentation: { href: 'https://docs.mollie.com/overview/handling-errors', type: 'text/html' } } });

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    requests.push({ path: url.pathname + url.search, authorization: req.headers.authorization });
    const answer = (status: number, body: string) => {
      if (res.destroyed) return;
      res.writeHead(status, HAL);
      res.end(body);
    };
    const handle = () => {
      if (state.failWith !== null) return answer(state.failWith, error(state.failWith, 'Server Error', 'simulated failure'));
      if (req.headers.authorization !== `Bearer ${apiKey}`) {
        return answer(401, error(401, 'Unauthorized Request', 'Missing authentication, or failed to authenticate'));
      }
      const m = /^\/v2\/payments\/([^/]+)(\/refunds)?$/.exec(url.pathname);
      if (req.method !== 'GET' || !m) return answer(404, error(404, 'Not Found', 'The resource does not exist'));
      const payment = payments.get(m[1]);
      if (!payment) return answer(404, error(404, 'Not Found', `No payment exists with token ${m[1]}.`));
      const list = refunds.get(m[1]) ?? [];
      if (m[2]) {
        return answer(
          200,
          JSON.stringify({
            count: list.length,
            _embedded: { refunds: list },
            _links: { self: { href: `${baseUrl}/v2/payments/${m[1]}/refunds`, type: 'application/hal+json' } },
          }),
        );
      }
      const body: Json = { ...payment };
      if (list.length > 0) {
        body._links = { ...(payment._links as Json | undefined), refunds: { href: `${baseUrl}/v2/payments/${m[1]}/refunds`, type: 'application/hal+json' } };
        if (state.embedSupported && (url.searchParams.get('embed') ?? '').split(',').includes('refunds')) {
          body._embedded = { refunds: list };
        }
      }
      return answer(200, JSON.stringify(body));
    };
    if (state.delayMs > 0) setTimeout(handle, state.delayMs);
    else handle();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    baseUrl,
    apiKey,
    setPayment: (p) => void payments.set(String(p.id), structuredClone(p)),
    addRefund: (paymentId, r) => void refunds.set(paymentId, [...(refunds.get(paymentId) ?? []), structuredClone(r)]),
    reset: () => {
      payments.clear();
      refunds.clear();
      requests.length = 0;
      Object.assign(state, { failWith: null, delayMs: 0, embedSupported: true });
    },
    get failWith() {
      return state.failWith;
    },
    set failWith(v) {
      state.failWith = v;
    },
    get delayMs() {
      return state.delayMs;
    },
    set delayMs(v) {
      state.delayMs = v;
    },
    get embedSupported() {
      return state.embedSupported;
    },
    set embedSupported(v) {
      state.embedSupported = v;
    },
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((e) => (e ? reject(e) : resolve()));
      }),
  };
}
