import client from 'prom-client';
import { ALL_QUEUES, getQueue } from './queues';

/**
 * Prometheus metrics. Each process (API, every worker) keeps its own registry and exposes it:
 * the API at GET /metrics, workers on WORKER_METRICS_PORT. Queue depths are read from Redis at
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
          const counts = await Promise.race([
            getQueue(q).getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed', 'prioritized'),
            new Promise<never>((_, rej) => setTimeout(() => rej(new Error('timeout')), 1000).unref()),
          ]);
          for (const [state, n] of Object.entries(counts)) this.set({ queue: q, state }, n);
        } catch {
          // Redis down: the gauge is absent for this scrape rather than wrong.
        }
      }),
    );
  },
});
