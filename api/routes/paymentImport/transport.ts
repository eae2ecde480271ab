import type { Context, Middleware } from 'koa';
import { AppError, forbidden } from '../../../shared/errors';
import { consume, type Limiters } from '../../middleware/rateLimit';
import { clientIp } from '../../middleware/clientIp';
import type { Config } from '../../../shared/config';
import { acceptContentEncoding, decodedBody, undecodableBody, type BodyEncoding } from '../../middleware/contentEncoding';

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
 * it is cut off. A compressed body (Content-Encoding gzip, deflate or br) is decoded first — the
 * provider signed the payload, not its transfer form — and the limit counts decoded bytes; an
 * encoding we cannot decode is 415, bytes that do not decode 400 (api/middleware/contentEncoding.ts).
 * Stored on ctx.state.rawBody.
 */
export const readRawBody: Middleware = async (ctx, next) => {
  const limit = (ctx as unknown as { config: Config }).config.bodyLimitBytes;
  const tooLarge = () => new AppError('INVALID_INPUT', 413, `Request body exceeds the limit of ${limit} bytes`);
  const declared = Number(ctx.get('Content-Length') || 0);
  if (declared > limit) throw tooLarge();
  const encoding = acceptContentEncoding(ctx.req);
  // A stream something else already read to its end would never emit 'end' again, and the request
  // would hang unanswered; only a path that skipped RAW_BODY_PREFIXES could do that (our bug: 500).
  if (ctx.req.readableEnded) throw new Error('webhook body was consumed before readRawBody');
  ctx.state.rawBody = await collect(ctx, encoding, limit, tooLarge);
  await next();
};

function collect(ctx: Context, encoding: BodyEncoding, limit: number, tooLarge: () => AppError): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const req = ctx.req;
    const source = decodedBody(req, encoding);
    const cleanup = () => {
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onDecodeError);
      req.off('error', onReadError);
      if (source !== req) {
        req.unpipe(source as unknown as NodeJS.WritableStream);
        source.destroy();
      }
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        // The rest is discarded as it comes; the error answer closes the connection
        // (api/middleware/errorHandler.ts) if the client is still sending.
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
    const onReadError = (err: Error) => {
      cleanup();
      reject(new AppError('INVALID_INPUT', 400, `Request body could not be read: ${err.message}`));
    };
    const onDecodeError = (err: Error) => {
      if (source === req) return onReadError(err);
      cleanup();
      reject(undecodableBody(encoding));
    };
    source.on('data', onData);
    source.on('end', onEnd);
    source.on('error', onDecodeError);
    if (source !== req) req.on('error', onReadError);
  });
}
