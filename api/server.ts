import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
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
  /**
   * Graceful stop: no new connections; every request in flight, and any request that still
   * arrives on an open keep-alive connection, is answered with `Connection: close`; idle
   * keep-alive connections are closed at once. Resolves when the last connection is gone. Past
   * `cutAfterMs` whatever is left is closed hard and logged (resolves `{ cut: n }`).
   */
  shutdown: (opts?: { cutAfterMs?: number }) => Promise<{ cut: number }>;
  /** shutdown() without a cut: for tests and embedders. */
  close: () => Promise<void>;
}

export async function startServer(cfg: Config = config(), port = cfg.port): Promise<RunningServer> {
  const app = createApp(cfg);
  // Give Redis a moment to connect before taking traffic (not fatal: /ready reports it).
  await Promise.all([redisReady(producerRedis(), 2000), redisReady(limiterRedis(), 2000)]);
  const handle = app.callback();
  let stopping = false;
  /** Responses not yet finished, and the open sockets: what a graceful stop waits for. */
  const inFlight = new Set<http.ServerResponse>();
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
    // During a stop every answer ends its connection: Node then writes `Connection: close` and
    // closes the socket after the response, so a keep-alive client moves to another instance.
    if (stopping) res.shouldKeepAlive = false;
    void handle(req, res);
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  // Bounded timeouts: a slow client cannot hold a connection forever.
  server.requestTimeout = 60_000;
  server.headersTimeout = 20_000;
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(port, cfg.host, resolve));
  const actualPort = (server.address() as AddressInfo).port;
  let closing: Promise<{ cut: number }> | undefined;
  const shutdown = (opts: { cutAfterMs?: number } = {}) =>
    (closing ??= new Promise<{ cut: number }>((resolve) => {
      stopping = true;
      let cut = 0;
      // Answers not begun yet go out with Connection: close; one already streaming keeps its
      // header, and its connection is closed as idle once it is done (the sweep below).
      for (const res of inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
      // Idle keep-alive connections (no request in flight) close now; a client that sent on one at
      // this instant sees the connection close without an answer and retries elsewhere. The sweep
      // repeats until the last connection is gone: a connection whose answer carried keep-alive
      // (a response already under way at SIGTERM) is idle, and closed, as soon as it is answered.
      const sweep = setInterval(() => server.closeIdleConnections(), 50);
      const cutTimer =
        opts.cutAfterMs === undefined
          ? undefined
          : setTimeout(() => {
              cut = sockets.size;
              logger.error(
                { connections: cut, requestsInFlight: inFlight.size, afterMs: opts.cutAfterMs },
                'API shutdown deadline: closing the connections still open, cutting their requests',
              );
              server.closeAllConnections();
            }, opts.cutAfterMs);
      server.close(() => {
        clearInterval(sweep);
        clearTimeout(cutTimer);
        resolve({ cut });
      });
      server.closeIdleConnections();
    }));
  return {
    server,
    port: actualPort,
    url: `http://127.0.0.1:${actualPort}`,
    shutdown,
    close: async () => {
      await shutdown();
    },
  };
}

/** What the platform should allow between SIGTERM and SIGKILL (Heroku: 30 s). */
const SHUTDOWN_DEADLINE_MS = 25_000;

/** The web process: `scripts/serve.mjs web` (Procfile) calls it, `tsx api/server.ts` runs it. */
export async function main() {
  const running = await runEntryPoint(() => startServer());
  // Handlers before the "listening" line, as in workers/index.ts.
  stopGracefullyOnSignals({
    message: 'API shutting down: finishing in-flight requests',
    deadlineMs: SHUTDOWN_DEADLINE_MS,
    // Connections still open this long after SIGTERM (a request slower than that) are cut, with
    // an error line counting them, leaving 5 s to close queues, Redis and the pool; exit 1 then.
    stop: async () => ((await running.shutdown({ cutAfterMs: SHUTDOWN_DEADLINE_MS - 5_000 })).cut ? { exitCode: 1 } : undefined),
  });
  logger.info({ port: running.port }, 'API listening');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  void main();
}
