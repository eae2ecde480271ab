import type { Context, Middleware } from 'koa';
import { hasMetricsToken, httpDuration, isLoopback, registry } from '../../shared/metrics';
import type { Config } from '../../shared/config';
import { notFound, unauthorized } from '../../shared/errors';

/**
 * A finished request's duration by route pattern (never the raw path: ids would explode the label
 * set). api/middleware/requestFrame.ts measures it around the whole chain.
 */
export function recordRequestDuration(ctx: Context, elapsedNs: bigint): void {
  const route = (ctx as unknown as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
  httpDuration.observe({ method: ctx.method, route: String(route), status: String(ctx.status) }, Number(elapsedNs) / 1e9);
}

export const METRICS_PATH = '/metrics';

/**
 * GET /metrics. With METRICS_TOKEN set it needs `Authorization: Bearer <METRICS_TOKEN>`; without
 * it only loopback clients (a sidecar or an SSH tunnel) may scrape. That fallback is for
 * development: behind a reverse proxy on the same host every request comes from loopback, so
 * production refuses to start without METRICS_TOKEN (shared/config.ts).
 */
export function metricsEndpoint(cfg: Config): Middleware {
  // Not async on the way past: every other request goes straight on, without a promise of its own.
  const serve = async (ctx: Context) => {
    if (cfg.metricsToken) {
      if (!hasMetricsToken(ctx.get('Authorization'), cfg.metricsToken)) throw unauthorized('Metrics need the METRICS_TOKEN bearer token');
    } else if (!isLoopback(ctx.req.socket.remoteAddress)) {
      throw notFound('Route');
    }
    // Not a router route, so name it for recordRequestDuration instead of counting scrapes as unmatched.
    (ctx as unknown as { _matchedRoute?: string })._matchedRoute = METRICS_PATH;
    ctx.type = registry.contentType;
    ctx.body = await registry.metrics();
  };
  return (ctx, next) => (ctx.path !== METRICS_PATH || ctx.method !== 'GET' ? next() : serve(ctx));
}
