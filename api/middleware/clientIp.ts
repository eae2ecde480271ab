import type { Context } from 'koa';

/**
 * The client's IP: the socket address, or, only when the app runs with trust-proxy (Koa's
 * app.proxy), the X-Forwarded-For entry added by the outermost of our TRUST_PROXY_HOPS proxies.
 * Entries further left come from the client itself, so they never count for rate limits.
 */
export function clientIp(ctx: Context): string {
  return (ctx.app.proxy ? ctx.ip : ctx.req.socket.remoteAddress) || 'unknown';
}
