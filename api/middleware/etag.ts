import { hash } from 'node:crypto';
import type { Context } from 'koa';

/**
 * Weak ETags for single resources (routes ending in /:id): a hash of the JSON the handler produced;
 * a matching If-None-Match gets 304 without a body. Weak because the same JSON may travel
 * compressed or not; run inside koa-compress (api/middleware/jsonResponse.ts), so it hashes the
 * uncompressed JSON. Lists change with every page and filter, documents cache on their own.
 * `private, no-cache` keeps shared caches from storing tenant data and makes browsers revalidate.
 */
export function etag(ctx: Context): void {
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return;
  if (ctx.status !== 200 || !ctx.path.startsWith('/api/')) return;
  const route = (ctx as unknown as { _matchedRoute?: string })._matchedRoute;
  if (typeof route !== 'string' || !route.endsWith('/:id')) return;
  // Serialized by serializeJson (run just before this) or by the handler (the invoice view
  // cache, usually with its tag); buffers and streams (files) are left alone.
  const json: unknown = ctx.body;
  if (typeof json !== 'string' || !ctx.response.is('json')) return;
  // A handler that knows its version better (documents) may have set its own tag already.
  const tag = ctx.response.get('ETag') || weakTag(json);
  ctx.set('ETag', tag);
  if (!ctx.response.get('Cache-Control')) ctx.set('Cache-Control', 'private, no-cache');
  if (ifNoneMatchHits(ctx.get('If-None-Match'), tag)) {
    ctx.status = 304;
    ctx.body = null;
  }
}

/** The weak tag of a JSON text: the first 27 characters of its SHA-256 in base64url. */
export const weakTag = (json: string): string => `W/"${hash('sha256', json, 'base64url').slice(0, 27)}"`;

/**
 * RFC 9110 §13.1.2: weak comparison against each listed tag, or `*`. Not Koa's ctx.fresh: that
 * follows cache semantics and ignores If-None-Match when the request says `Cache-Control:
 * no-cache`, which fetch() adds to every request carrying a conditional header it set by hand.
 */
export function ifNoneMatchHits(header: string, tag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const opaque = tag.replace(/^W\//, '');
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === opaque);
}
