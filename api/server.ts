import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { config, type Config } from '../shared/config';
import { createApp } from './app';
import { limiterRedis, producerRedis, redisReady } from '../shared/redis';
import { runEntryPoint, stopGracefullyOnSignals } from '../shared/lifecycle';
import { logger } from '../shared/logger';

export interface RunningServer {
  server: http.Server;
  port: number;
  url: string;
  close: () => Promise<void>;
}

export async function startServer(cfg: Config = config(), port = cfg.port): Promise<RunningServer> {
  const app = createApp(cfg);
  // Give Redis a moment to connect before taking traffic (not fatal: /ready reports it).
  await Promise.all([redisReady(producerRedis(), 2000), redisReady(limiterRedis(), 2000)]);
  const server = http.createServer(app.callback());
  // Bounded timeouts: a slow client cannot hold a connection forever.
  server.requestTimeout = 60_000;
  server.headersTimeout = 20_000;
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(port, cfg.host, resolve));
  const actualPort = (server.address() as AddressInfo).port;
  return {
    server,
    port: actualPort,
    url: `http://127.0.0.1:${actualPort}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

async function main() {
  const running = await runEntryPoint(() => startServer());
  // Handlers before the "listening" line, as in workers/index.ts.
  stopGracefullyOnSignals({
    message: 'API shutting down: finishing in-flight requests',
    deadlineMs: 25_000,
    stop: () => running.close(),
  });
  logger.info({ port: running.port }, 'API listening');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  void main();
}
