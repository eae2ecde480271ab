/**
 * A bare baseline as a process of its own (the deployed shape, docs/benchmarks.md): forked by
 * lib/deployed.ts with BENCH_BARE = JSON { mode, tenantId?, secret?, prefix? }, answers on IPC
 * with { url } (HTTP modes) or { ready: true } (pdfkit).
 * - read, write, list, webhook, datev: a bare Koa app with a plain pg Pool (DATABASE_POOL_MAX)
 *   serving that one route of lib/bareRoutes.ts on 127.0.0.1;
 * - pdfkit: a worker-like process, a BullMQ Worker on the queue `bench-pdfkit` under `prefix`
 *   (concurrency 1: one core's worth) drawing the pdfkit page of lib/pdfkitPage.ts per job.
 */
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { bareApp, barePool, startBare } from './servers';
import { bareDatevRoute, bareListRoute, bareReadRoute, bareWebhookRoute, bareWriteRoute } from './bareRoutes';
import { pdfkitInvoice, type Row } from './pdfkitPage';

export type BareMode = 'read' | 'write' | 'list' | 'webhook' | 'datev' | 'pdfkit';
export interface BareSpec {
  mode: BareMode;
  tenantId?: string;
  secret?: string;
  prefix?: string;
  rows?: Row[];
}

async function main(spec: BareSpec) {
  if (spec.mode === 'pdfkit') {
    const connection = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    const rows = spec.rows ?? [];
    const worker = new Worker(
      'bench-pdfkit',
      async () => {
        await pdfkitInvoice(rows);
      },
      { connection, prefix: spec.prefix, concurrency: 1 },
    );
    await worker.waitUntilReady();
    process.on('SIGTERM', () => void worker.close().then(() => process.exit(0)));
    process.send!({ ready: true });
    return;
  }
  const pool = barePool();
  const app = bareApp();
  const tenantId = spec.tenantId ?? '';
  app.use(
    {
      read: () => bareReadRoute(pool, tenantId),
      write: () => bareWriteRoute(pool, tenantId),
      list: () => bareListRoute(pool, tenantId),
      webhook: () => bareWebhookRoute(pool, spec.secret ?? ''),
      datev: () => bareDatevRoute(pool, tenantId),
    }[spec.mode](),
  );
  const running = await startBare(app, pool);
  process.on('SIGTERM', () => void running.close().then(() => process.exit(0)));
  process.send!({ url: running.url });
}

main(JSON.parse(process.env.BENCH_BARE ?? '{}') as BareSpec).catch((err) => {
  console.error(err);
  process.exit(1);
});
