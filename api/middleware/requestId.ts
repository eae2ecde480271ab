import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import { runWithLogContext } from '../../shared/logContext';

/**
 * Accept a sane X-Request-Id from the client (or a proxy), otherwise mint one; echo it back. The
 * rest of the chain runs in its log context: every line logged for the request carries the id.
 */
export const requestId: Middleware = async (ctx, next) => {
  const incoming = ctx.get('X-Request-Id');
  const id = /^[A-Za-z0-9._:-]{8,128}$/.test(incoming) ? incoming : randomUUID();
  ctx.state.requestId = id;
  ctx.set('X-Request-Id', id);
  await runWithLogContext({ requestId: id }, next);
};
