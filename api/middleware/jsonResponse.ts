import type { Middleware } from 'koa';
import { serializeJson } from './serializeJson';
import { etag } from './etag';

/**
 * What happens to an answer once the routes are done, inside koa-compress: a JSON body serialized
 * once (serializeJson.ts), then its ETag from that text (etag.ts). One layer for both: each async
 * layer is a few promises on every request (api/middleware/requestFrame.ts).
 */
export const jsonResponse: Middleware = async (ctx, next) => {
  await next();
  serializeJson(ctx);
  etag(ctx);
};
