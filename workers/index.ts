import http from 'node:http';
import { pathToFileURL } from 'node:url';
import { config } from '../shared/config';
import { startWorkers } from './worker';
import { logger } from '../shared/logger';
import { registry } from '../shared/metrics';
import { runEntryPoint, stopGracefullyOnSignals } from '../shared/lifecycle';

/** Worker process entry: `npm run worker` (Procfile: worker). Run as many as the load needs. */
async function main() {
  const running = await runEntryPoint(async () => {
    config();
    return startWorkers();
  });
  logger.info({ queues: running.workers.map((w) => w.name) }, 'workers started');
  // Each worker process exposes its own metrics (job durations); scrape every instance.
  let metricsServer: http.Server | null = null;
  if (config().workerMetricsPort) {
    metricsServer = http
      .createServer(async (req, res) => {
        if (req.url !== '/metrics') return void res.writeHead(404).end();
        res.writeHead(200, { 'content-type': registry.contentType }).end(await registry.metrics());
      })
      .listen(config().workerMetricsPort);
  }
  stopGracefullyOnSignals({
    message: 'workers shutting down: finishing active jobs',
    // Past this deadline the process exits; unfinished jobs' locks expire and another worker retries them.
    deadlineMs: 30_000,
    stop: async () => {
      metricsServer?.close();
      await running.close();
    },
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  void main();
}
