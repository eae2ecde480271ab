import http from 'node:http';
import type { AddressInfo } from 'node:net';
import client from 'prom-client';
import { ALL_QUEUES, getQueue } from './queues';
import { safeEqual } from './crypto/secretBox';
import { db } from './db';
import { config } from './config';
import { withTimeout } from './timeout';

/**
 * Prometheus metrics. Each process (API, every worker) keeps its own registry and exposes it:
 * the API at GET /metrics, workers on WORKER_METRICS_HOST:WORKER_METRICS_PORT. Queue depths are read from Redis at
 * scrape time, so any process reports the same fleet-wide numbers.
 */
export const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry });

export const httpDuration = new client.Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP request duration by route pattern and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

export const jobDuration = new client.Histogram({
  name: 'job_duration_seconds',
  help: 'Background job duration by queue, job name and outcome',
  labelNames: ['queue', 'name', 'outcome'] as const,
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [registry],
});

export const webhookOutcomes = new client.Counter({
  name: 'webhook_events_total',
  help: 'Inbound payment-provider webhooks by provider and resulting status',
  labelNames: ['provider', 'status'] as const,
  registers: [registry],
});

export const webhookBatchEvents = new client.Histogram({
  name: 'webhook_batch_events',
  help: 'Webhook events per batch booked in one transaction by a worker (outcome committed, or rolled_back: its events then ran one by one)',
  labelNames: ['outcome'] as const,
  buckets: [2, 5, 10, 20, 50, 100],
  registers: [registry],
});

export const webhookStoreBatchDeliveries = new client.Histogram({
  name: 'webhook_store_batch_deliveries',
  help: 'Verified webhook deliveries per batch an API process stored in one statement (outcome committed, or rolled_back: its deliveries were then stored one by one)',
  labelNames: ['outcome'] as const,
  buckets: [2, 5, 10, 20, 50, 100, 200],
  registers: [registry],
});

export const invoiceViewCache = new client.Counter({
  name: 'invoice_view_cache_total',
  help: 'GET /api/invoices/:id by cache outcome: hit (served the JSON serialized earlier, its rows unchanged), stale (rebuilt: something it shows changed), miss (not held)',
  labelNames: ['result'] as const,
  registers: [registry],
});

/**
 * A gauge read at scrape time from a function that the module owning the value registers when
 * it loads: that module imports this one (for its counters), so this one cannot import it.
 * Reads 0 until a function is registered, e.g. in a worker process, where the module never loads.
 */
function gaugeWithSource(name: string, help: string): (read: () => number) => void {
  let source: () => number = () => 0;
  new client.Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(source());
    },
  });
  return (read) => {
    source = read;
  };
}

/** The API's invoice view cache registers what it holds (api/routes/invoices/viewCache.ts). */
export const setInvoiceViewCacheBytesSource = gaugeWithSource(
  'invoice_view_cache_bytes',
  'Serialized invoice views an API process holds (characters of JSON; bounded by INVOICE_VIEW_CACHE_MB)',
);

/** The webhook store registers where to read its queue (shared/webhooks/ingest.ts). */
export const setWebhookStoreWaitingSource = gaugeWithSource(
  'webhook_store_waiting',
  'Verified webhook deliveries an API process holds for its next store statement (one statement runs at a time); growing means the database cannot keep up with the accepts',
);

export const recordWebhookOutcome = (provider: string, status: string) => webhookOutcomes.inc({ provider, status });

new client.Gauge({
  name: 'queue_jobs',
  help: 'Jobs per queue and state (waiting, active, delayed, failed, completed), read from Redis at scrape time',
  labelNames: ['queue', 'state'] as const,
  registers: [registry],
  async collect() {
    this.reset();
    await Promise.all(
      ALL_QUEUES.map(async (q) => {
        try {
          const counts = await withTimeout(getQueue(q).getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed', 'prioritized'), 1000);
          for (const [state, n] of Object.entries(counts)) this.set({ queue: q, state }, n);
        } catch {
          // Redis down: the gauge is absent for this scrape rather than wrong.
        }
      }),
    );
  },
});

/**
 * The outbox rows of this deployment (REDIS_PREFIX) not yet handed to Redis, per queue. Webhook
 * jobs wait there until a worker's relay sends them, so with no worker running they show up here,
 * not in queue_jobs. One query per scrape serves both gauges; on a database error both are absent.
 */
let outboxScrape: { at: number; rows: Promise<{ queue: string; n: number; oldest: number }[]> } | null = null;
function pendingOutbox() {
  if (!outboxScrape || Date.now() - outboxScrape.at > 1000) {
    const rows = withTimeout(
      db()
        .raw(
          `select queue, count(*)::int as n, extract(epoch from now() - min(created_at))::float8 as oldest
             from outbox where prefix = ? and enqueued_at is null group by queue`,
          [config().redisPrefix],
        )
        .then((r: { rows: { queue: string; n: number; oldest: number }[] }) => r.rows),
      1000,
    );
    rows.catch(() => {});
    outboxScrape = { at: Date.now(), rows };
  }
  return outboxScrape.rows;
}

/** A per-queue gauge of the pending outbox rows; absent for a scrape when PostgreSQL does not answer. */
function outboxGauge(name: string, help: string, value: (r: { n: number; oldest: number }) => number) {
  new client.Gauge({
    name,
    help,
    labelNames: ['queue'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      try {
        for (const r of await pendingOutbox()) this.set({ queue: r.queue }, value(r));
      } catch {
        // PostgreSQL unreachable or slow: absent rather than wrong.
      }
    },
  });
}
outboxGauge('outbox_pending', 'Outbox rows not yet handed to Redis, per queue, read from PostgreSQL at scrape time', (r) => r.n);
outboxGauge('outbox_oldest_pending_seconds', 'Age of the oldest outbox row not yet handed to Redis, per queue', (r) => r.oldest);

/** Whether an Authorization header carries the METRICS_TOKEN bearer token (constant-time compare). */
export function hasMetricsToken(authorization: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
  return m !== null && safeEqual(m[1], token);
}

/** The socket address, never X-Forwarded-For: a forwarded header is whatever the client wrote. */
export const isLoopback = (remoteAddress: string | undefined) => ['127.0.0.1', '::1', '::ffff:127.0.0.1'].includes(remoteAddress ?? '');

const errorBody = (status: number, code: string, message: string) => JSON.stringify({ error: { message, code, status } });

/**
 * A worker process's GET /metrics on its own port. Guarded like the API's: with METRICS_TOKEN the
 * bearer token is required; without it (development only, production requires the token) only
 * loopback clients are answered. The host defaults to 127.0.0.1, so a worker never offers its
 * metrics to every interface unless WORKER_METRICS_HOST says so.
 */
export async function startMetricsServer(opts: { port: number; host: string; token: string | null }): Promise<http.Server & { url: string }> {
  const server = http.createServer(async (req, res) => {
    const json = (status: number, body: string, headers: Record<string, string> = {}) =>
      void res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(body);
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || req.method !== 'GET') return json(404, errorBody(404, 'NOT_FOUND', 'Route not found'));
    if (opts.token) {
      if (!hasMetricsToken(req.headers.authorization, opts.token)) {
        return json(401, errorBody(401, 'UNAUTHORIZED', 'Metrics need the METRICS_TOKEN bearer token'), { 'www-authenticate': 'Bearer realm="metrics"' });
      }
    } else if (!isLoopback(req.socket.remoteAddress)) {
      return json(404, errorBody(404, 'NOT_FOUND', 'Route not found'));
    }
    try {
      const body = await registry.metrics();
      res.writeHead(200, { 'content-type': registry.contentType }).end(body);
    } catch {
      json(500, errorBody(500, 'INTERNAL_ERROR', 'Metrics could not be collected'));
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return Object.assign(server, { url: `http://${host}:${port}` });
}
