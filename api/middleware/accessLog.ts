import type { Context, Middleware } from 'koa';
import { logger, loggablePath } from '../../shared/logger';

/**
 * One structured line per request: never bodies, never auth headers. The request id comes from the
 * log context (api/middleware/requestId.ts runs this middleware inside it).
 */
export const accessLog: Middleware = async (ctx, next) => {
  const start = process.hrtime.bigint();
  try {
    await next();
  } finally {
    // Below info (benchmarks, quiet deployments) the line would be dropped: skip building it.
    if (logger.isLevelEnabled('info')) logRequest(ctx, start);
  }
};

function logRequest(ctx: Context, start: bigint): void {
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  logger.info({ method: ctx.method, path: loggablePath(ctx.path), status: ctx.status, ms: Math.round(ms * 10) / 10 }, 'request');
}
