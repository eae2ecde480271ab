import Koa from 'koa';
import type Router from '@koa/router';
import { koaBody } from 'koa-body';
import cors from '@koa/cors';
import compress from 'koa-compress';
import { config as loadedConfig, type Config } from '../shared/config';
import { limiterRedis } from '../shared/redis';
import { requestFrame } from './middleware/requestFrame';
import { errorHandler } from './middleware/errorHandler';
import { createLimiters, consume } from './middleware/rateLimit';
import { clientIp } from './middleware/clientIp';
import { bullBoard } from './admin/bullBoard';
import { routers } from './routes';
import { notFound } from '../shared/errors';
import { metricsEndpoint } from './middleware/metrics';
import { jsonResponse } from './middleware/jsonResponse';
import { acceptContentEncoding, isDecodingError, undecodableBody } from './middleware/contentEncoding';

/** Paths whose raw body must reach the handler untouched (signature checks over exact bytes). */
export const RAW_BODY_PREFIXES = ['/api/payment-import/'];

/** The methods whose bodies koa-body parses (its default parsedMethods). */
const BODY_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH']);

/**
 * The route groups as one middleware that hands a request only to the groups whose prefix its
 * path starts with, in their order. Same outcome as mounting every group (a route can only match
 * under its group's prefix) without every group matching its routes against every request. Paths
 * match case-sensitively, as the groups' routers do (api/routing.ts createRouter).
 */
function routeGroups(groups: Router[]): Koa.Middleware {
  const mounted = groups.map((r) => ({ prefix: r.opts.prefix ?? '', routes: r.routes() as unknown as Koa.Middleware }));
  return (ctx, next) => {
    const chain = mounted.filter((g) => ctx.path.startsWith(g.prefix));
    const run = (i: number): Promise<unknown> => (i === chain.length ? next() : Promise.resolve(chain[i].routes(ctx, () => run(i + 1))));
    return run(0);
  };
}

export function createApp(cfg: Config = loadedConfig()): Koa {
  // Proxies append the address they saw to X-Forwarded-For; everything left of the entries our own
  // proxies added is whatever the client sent. Counting hops from the right keeps it unspoofable.
  const app = new Koa({ proxy: cfg.trustProxy, maxIpsCount: cfg.trustProxyHops });
  const limiters = createLimiters(cfg, limiterRedis());
  Object.assign(app.context, { limiters, config: cfg });

  // Request id, log context, metrics and access log (one layer), then the error envelope.
  app.use(requestFrame);
  app.use(errorHandler(cfg.bodyLimitBytes));
  app.use(metricsEndpoint(cfg));
  const corsHeaders = cors({
    // Only the configured regional front ends may call the API from a browser.
    origin: (ctx) => (cfg.corsOrigins.includes(ctx.get('Origin')) ? ctx.get('Origin') : ''),
    credentials: true,
    exposeHeaders: ['X-Request-Id', 'Retry-After', 'ETag'],
    allowHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-Request-Id', 'If-None-Match'],
  });
  app.use((ctx, next) => {
    // Without an Origin header @koa/cors adds `Vary: Origin`, finds no allowed origin and goes on;
    // the same here without its async layer (API clients other than browsers send no Origin).
    if (ctx.get('Origin')) return corsHeaders(ctx, next);
    ctx.vary('Origin');
    return next();
  });
  app.use(compress({ threshold: 1024 }));
  // Inside compress: the JSON serialized once (compress measures it; Koa's length getter would
  // stringify it again), then its ETag from that uncompressed text.
  app.use(jsonResponse);
  app.use(bullBoard(cfg));

  // General API limit per IP; webhooks have their own limit on their route.
  app.use(async (ctx, next) => {
    if (ctx.path.startsWith('/api/') && !RAW_BODY_PREFIXES.some((p) => ctx.path.startsWith(p))) {
      await consume(limiters.api, clientIp(ctx));
    }
    await next();
  });

  const jsonTypes = ['application/json', 'application/json-patch+json', 'application/vnd.api+json', 'application/csp-report', 'application/reports+json'];
  const jsonBody = koaBody({
    json: true,
    urlencoded: false,
    multipart: false,
    text: false,
    jsonTypes,
    jsonLimit: cfg.bodyLimitBytes,
    jsonStrict: true,
    onError: (err, ctx) => {
      // The decoder (co-body → inflation → zlib) fails with a bare zlib error: the client's bytes.
      if (isDecodingError(err)) throw undecodableBody((ctx.get('Content-Encoding') || 'identity') as never);
      throw err;
    },
  });
  app.use((ctx, next) => {
    // koa-body reads bodies of these methods only (its parsedMethods); any other passes it untouched.
    if (!BODY_METHODS.has(ctx.method) || RAW_BODY_PREFIXES.some((p) => ctx.path.startsWith(p))) return next();
    // Exactly the bodies koa-body reads (POST/PUT/PATCH with a JSON type): their Content-Encoding
    // is checked before any byte is read (415 for one we cannot decode). A body nobody reads (an
    // unknown path's form post, a GET's) is not judged by its encoding, as it is not by its type.
    if (ctx.is(jsonTypes)) acceptContentEncoding(ctx.req);
    return jsonBody(ctx, next);
  });

  app.use(routeGroups(routers));

  app.use(async () => {
    throw notFound('Route');
  });
  return app;
}
