import type { Context, Middleware } from 'koa';
import { logger, loggablePath } from '../../shared/logger';

/** One structured line per request: never bodies, never auth headers. */
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
  logger.info(
    { requestId: ctx.state.requestId, method: ctx.method, path: loggablePath(ctx.path), status: ctx.status, ms: Math.round(ms * 10) / 10 },
    'request',
  );
}
