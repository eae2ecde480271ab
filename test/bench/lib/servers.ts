/**
 * The two sides of an HTTP benchmark: our real API (startServer in this process, real PostgreSQL
 * and Redis, configuration from the bench environment) and a bare Koa app with a plain pg Pool of
 * the same size, listening on loopback.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import pg from 'pg';

export interface Listening {
  url: string;
  close: () => Promise<void>;
}

export async function startOurServer(): Promise<Listening> {
  const { loadConfig } = await import('../../../shared/config');
  const { startServer } = await import('../../../api/server');
  const running = await startServer(loadConfig({ ...process.env, HOST: '127.0.0.1' }), 0);
  return { url: running.url, close: running.close };
}

/** A plain pg Pool sized like the service's knex pool (DATABASE_POOL_MAX, default 10). */
export function barePool(): pg.Pool {
  return new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DATABASE_POOL_MAX || 10) });
}

export async function startBare(app: Koa, pool: pg.Pool): Promise<Listening> {
  const server = http.createServer(app.callback());
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await pool.end();
    },
  };
}

/** A bare app answers errors as JSON 500 and logs nothing, so a failing baseline shows up as non-2xx. */
export function bareApp(): Koa {
  const app = new Koa();
  app.silent = true;
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      ctx.status = 500;
      ctx.body = { error: String(err) };
    }
  });
  return app;
}

/** Read the whole request body (bare apps use no body parser middleware). */
export function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
