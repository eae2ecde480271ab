import type { Middleware } from 'koa';
import { httpDuration, registry } from '../../shared/metrics';
import { safeEqual } from '../../shared/crypto/secretBox';
import type { Config } from '../../shared/config';
import { notFound, unauthorized } from '../../shared/errors';

/** Request durations by route pattern (never the raw path: ids would explode the label set). */
export const measureRequests: Middleware = async (ctx, next) => {
  const end = httpDuration.startTimer();
  try {
    await next();
  } finally {
    const route = (ctx as unknown as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
    end({ method: ctx.method, route: String(route), status: String(ctx.status) });
  }
};

/**
 * GET /metrics. With METRICS_TOKEN set it needs `Authorization: Bearer <METRICS_TOKEN>`;
 * without it only loopback clients (a sidecar or an SSH tunnel) may scrape.
 */
export function metricsEndpoint(cfg: Config): Middleware {
  return async (ctx, next) => {
    if (ctx.path !== '/metrics' || ctx.method !== 'GET') return next();
    if (cfg.metricsToken) {
      const m = /^Bearer\s+(\S+)$/i.exec(ctx.get('Authorization'));
      if (!m || !safeEqual(m[1], cfg.metricsToken)) throw unauthorized('Metrics need the METRICS_TOKEN bearer token');
    } else {
      const ip = ctx.req.socket.remoteAddress ?? '';
      if (!['127.0.0.1', '::1', '::ffff:127.0.0.1'].includes(ip)) throw notFound('Route');
    }
    ctx.type = registry.contentType;
    ctx.body = await registry.metrics();
  };
}
