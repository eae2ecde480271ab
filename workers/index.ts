import type http from 'node:http';
import { pathToFileURL } from 'node:url';
import { config } from '../shared/config';
import { startWorkers } from './worker';
import { currentCpuPriority, lowerCpuPriority, type CpuPriority } from './cpuPriority';
import { logger } from '../shared/logger';
import { startMetricsServer } from '../shared/metrics';
import { runEntryPoint, stopGracefullyOnSignals } from '../shared/lifecycle';

/** Worker process entry: `scripts/serve.mjs worker` (Procfile) calls it, `npm run worker` runs it. Run as many as the load needs. */
export async function main() {
  // Each worker process exposes its own metrics (job durations); scrape every instance. Loopback
  // by default and METRICS_TOKEN-guarded like the API's, so a port opened by mistake leaks nothing.
  // Bound before the workers start: a port that cannot be bound stops the process before it takes jobs.
  let metricsServer: http.Server | null = null;
  let priority: CpuPriority = currentCpuPriority();
  const running = await runEntryPoint(async () => {
    const cfg = config();
    // Before anything starts: threads and sandboxed renderers started later inherit it. Lowering
    // one's own priority needs no privilege. Linux applies it to the main (JavaScript) thread.
    if (cfg.workerNice) priority = lowerCpuPriority(cfg.workerNice);
    if (cfg.workerMetricsPort) {
      const server = await startMetricsServer({ port: cfg.workerMetricsPort, host: cfg.workerMetricsHost, token: cfg.metricsToken });
      metricsServer = server;
      logger.info({ url: `${server.url}/metrics`, auth: cfg.metricsToken ? 'METRICS_TOKEN' : 'loopback clients only' }, 'worker metrics listening');
    }
    return startWorkers();
  });
  // Handlers before the "started" line: a supervisor (or a test) that signals as soon as it reads
  // the line must find them installed, not Node's default, which kills the process mid-job.
  stopGracefullyOnSignals({
    message: 'workers shutting down: finishing active jobs',
    // Past this deadline the process exits; unfinished jobs' locks expire and another worker retries them.
    deadlineMs: 30_000,
    // Every handle is closed, nothing is left to keep the process alive: the metrics server and
    // its kept-alive scrape connections, the workers (after their active jobs; BullMQ then ends
    // the sandboxed renderer children, which finish a job of their own first on SIGTERM), the
    // outbox relay's LISTEN connection; then lifecycle.ts closes queues, Redis and the pool.
    stop: async () => {
      metricsServer?.close();
      metricsServer?.closeAllConnections();
      await running.close();
      return undefined;
    },
  });
  logger.info({ queues: running.workers.map((w) => w.name), ...priority }, 'workers started');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  void main();
}
