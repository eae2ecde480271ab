import type { Middleware } from 'koa';
import { runWithLogContext } from '../../shared/logContext';
import { assignRequestId } from './requestId';
import { logRequest } from './accessLog';
import { recordRequestDuration } from './metrics';

/**
 * The outermost layer of every request: its id (requestId.ts) and the log context entered with
 * it, then, when the rest of the chain is done, its duration for the metrics (metrics.ts) and the
 * access log line (accessLog.ts), from one clock reading. One layer where there were three nested
 * ones: every async layer is a few promises per request, and with the log context's
 * AsyncLocalStorage each promise also runs a hook (docs/benchmarks.md, "The request stack").
 */
export const requestFrame: Middleware = (ctx, next) => {
  const requestId = assignRequestId(ctx);
  const start = process.hrtime.bigint();
  return runWithLogContext({ requestId }, async () => {
    try {
      await next();
    } finally {
      const elapsedNs = process.hrtime.bigint() - start;
      recordRequestDuration(ctx, elapsedNs);
      logRequest(ctx, elapsedNs);
    }
  });
};
