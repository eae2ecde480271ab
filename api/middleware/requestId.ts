import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';

const SANE_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/**
 * Accept a sane X-Request-Id from the client (or a proxy), otherwise mint one; echo it back. The
 * caller (api/middleware/requestFrame.ts) runs the rest of the chain in its log context, so every
 * line logged for the request carries the id.
 */
export function assignRequestId(ctx: Context): string {
  const incoming = ctx.get('X-Request-Id');
  const id = SANE_ID.test(incoming) ? incoming : randomUUID();
  ctx.state.requestId = id;
  ctx.set('X-Request-Id', id);
  return id;
}
