import type { Context } from 'koa';

/**
 * The refresh cookie (docs/auth.md, "Tokens and cookie"): HttpOnly, Secure, SameSite=Strict,
 * scoped to /api/auth so it travels only to refresh and logout. Written by hand because Koa's
 * cookie jar refuses Secure cookies on a plain-HTTP hop (TLS usually ends at the proxy).
 */
export const REFRESH_COOKIE = 'refreshToken';
const ATTRS = 'HttpOnly; Secure; SameSite=Strict; Path=/api/auth';

export function setRefreshCookie(ctx: Context, token: string, maxAgeSec: number): void {
  ctx.append('Set-Cookie', `${REFRESH_COOKIE}=${token}; ${ATTRS}; Max-Age=${maxAgeSec}`);
}

export function clearRefreshCookie(ctx: Context): void {
  ctx.append('Set-Cookie', `${REFRESH_COOKIE}=; ${ATTRS}; Max-Age=0`);
}

export function readRefreshCookie(ctx: Context): string | undefined {
  const header = ctx.get('Cookie');
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === REFRESH_COOKIE) {
      const v = part.slice(i + 1).trim();
      return /^[A-Za-z0-9_-]{20,200}$/.test(v) ? v : undefined;
    }
  }
  return undefined;
}
