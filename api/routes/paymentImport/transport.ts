import type { Context, Middleware } from 'koa';
import { AppError, forbidden } from '../../../shared/errors';
import { consume, type Limiters } from '../../middleware/rateLimit';
import { clientIp } from '../../middleware/clientIp';
import type { Config } from '../../../shared/config';

/**
 * Transport checks of the inbound webhook path, before anything touches the database.
 * RAW_BODY_PREFIXES in app.ts keeps JSON parsing and the general API limiter away from it.
 */

/**
 * Spec: plain HTTP is refused. ctx.secure is true for a TLS socket, or — only when the app runs
 * with TRUST_PROXY — when the proxy says X-Forwarded-Proto: https (Koa's app.proxy), so a client
 * cannot claim HTTPS itself. REQUIRE_HTTPS_WEBHOOKS=false exists for local development and tests.
 */
export const requireHttps: Middleware = async (ctx, next) => {
  const cfg = (ctx as unknown as { config: Config }).config;
  if (cfg.requireHttpsWebhooks && !ctx.secure) throw forbidden('Webhooks must be delivered over HTTPS');
  await next();
};

/** Spec limit: 30 webhook requests per 60 minutes per IP → 429 RATE_LIMITED with Retry-After. */
export const webhookRateLimit: Middleware = async (ctx, next) => {
  await consume((ctx as unknown as { limiters: Limiters }).limiters.webhooks, clientIp(ctx));
  await next();
};

/**
 * Read the request body as the exact bytes the provider signed, bounded by BODY_LIMIT_BYTES:
 * a declared Content-Length over the limit is refused before reading, a stream that grows past
 * it is cut off. Stored on ctx.state.rawBody.
 */
export const readRawBody: Middleware = async (ctx, next) => {
  const limit = (ctx as unknown as { config: Config }).config.bodyLimitBytes;
  const tooLarge = () => new AppError('INVALID_INPUT', 413, `Request body exceeds the limit of ${limit} bytes`);
  const declared = Number(ctx.get('Content-Length') || 0);
  if (declared > limit) throw tooLarge();
  // A stream something else already read to its end would never emit 'end' again, and the request
  // would hang unanswered; only a path that skipped RAW_BODY_PREFIXES could do that (our bug: 500).
  if (ctx.req.readableEnded) throw new Error('webhook body was consumed before readRawBody');
  ctx.state.rawBody = await collect(ctx, limit, tooLarge);
  await next();
};

function collect(ctx: Context, limit: number, tooLarge: () => AppError): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const req = ctx.req;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.resume();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(new AppError('INVALID_INPUT', 400, `Request body could not be read: ${err.message}`));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}
