import type { Context } from 'koa';

/**
 * JSON bodies serialized once, here, after the routes and before the ETag is computed from this
 * text (api/middleware/jsonResponse.ts), inside koa-compress: Koa's `response.length` getter,
 * which koa-compress reads to compare with its threshold, stringifies an object body only to
 * measure it, and Koa's respond() then stringifies it again. A list page is tens of KB of JSON,
 * so that was a second JSON.stringify per request (docs/lists.md). Koa would send the same bytes.
 */
export function serializeJson(ctx: Context): void {
  const body: unknown = ctx.body;
  if (body === null || typeof body !== 'object' || Buffer.isBuffer(body) || typeof (body as { pipe?: unknown }).pipe === 'function') return;
  // The JSON content type set by the object assignment stays; the length comes with the string.
  ctx.body = JSON.stringify(body);
}
