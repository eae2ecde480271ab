import type { Context } from 'koa';
import { logger, loggablePath } from '../../shared/logger';

/**
 * One structured line per request: never bodies, never auth headers. The request id comes from the
 * log context (api/middleware/requestFrame.ts writes the line inside it).
 */
export function logRequest(ctx: Context, elapsedNs: bigint): void {
  // Below info (benchmarks, quiet deployments) the line would be dropped: skip building it.
  if (!logger.isLevelEnabled('info')) return;
  const ms = Number(elapsedNs) / 1e6;
  logger.info({ method: ctx.method, path: loggablePath(ctx.path), status: ctx.status, ms: Math.round(ms * 10) / 10 }, 'request');
}
