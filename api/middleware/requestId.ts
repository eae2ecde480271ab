import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';

/** Accept a sane X-Request-Id from the client (or a proxy), otherwise mint one; echo it back. */
export const requestId: Middleware = async (ctx, next) => {
  const incoming = ctx.get('X-Request-Id');
  const id = /^[A-Za-z0-9._:-]{8,128}$/.test(incoming) ? incoming : randomUUID();
  ctx.state.requestId = id;
  ctx.set('X-Request-Id', id);
  await next();
};
