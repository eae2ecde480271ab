import type { Context } from 'koa';

/**
 * The client's IP: the socket address, or the left-most X-Forwarded-For entry only when the app
 * runs with trust-proxy (Koa's app.proxy), so clients cannot spoof their way around rate limits.
 */
export function clientIp(ctx: Context): string {
  return (ctx.app.proxy ? ctx.ip : ctx.req.socket.remoteAddress) || 'unknown';
}
