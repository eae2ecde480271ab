import type { Middleware } from 'koa';
import type { IncomingMessage } from 'node:http';
import { AppError, fromDatabaseError, MAX_DETAILS } from '../../shared/errors';
import { isDecodingError } from './contentEncoding';
import { logger, loggablePath } from '../../shared/logger';

/**
 * Every failure leaves the API in the spec's envelope { error: { message, code, status, details } }.
 * Known errors map to their code; library errors (body parser, database) are translated; anything
 * else is a 500 INTERNAL_ERROR with a generic message, logged (the log context adds the request id).
 */
/** Connection-level database failures (server down, restarting, pool exhausted): 503, not 500. */
function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: string; name?: string; message?: string };
  if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P02', '57P03', '08006', '08001', '08003', '08004'].includes(e?.code ?? '')) return true;
  if (e?.name === 'KnexTimeoutError') return true;
  return /Connection terminated|Client has encountered a connection error|the database system is (starting up|shutting down)/i.test(e?.message ?? '');
}

export function toAppError(err: unknown, bodyLimitBytes: number): AppError {
  if (err instanceof AppError) return err;
  const e = err as { status?: number; statusCode?: number; type?: string; message?: string; name?: string };
  const status = e?.status ?? e?.statusCode;
  if (e?.type === 'entity.too.large' || status === 413) {
    return new AppError('INVALID_INPUT', 413, `Request body exceeds the limit of ${bodyLimitBytes} bytes`);
  }
  if (e?.type === 'entity.parse.failed' || (status === 400 && /JSON|parse/i.test(e?.message ?? ''))) {
    return new AppError('INVALID_INPUT', 400, 'Request body is not valid JSON');
  }
  // The JSON parser refuses "__proto__" / "constructor.prototype" keys (prototype pollution) with a
  // bare SyntaxError: that is the client's bad input, not our failure.
  if (e?.name === 'SyntaxError' && /prototype property/i.test(e?.message ?? '')) {
    return new AppError('INVALID_INPUT', 400, 'Request body contains a forbidden property name (__proto__ or constructor.prototype)');
  }
  if (isDatabaseUnavailable(err)) {
    return new AppError('SERVICE_UNAVAILABLE', 503, 'The database is temporarily unavailable; please retry shortly', undefined, { 'Retry-After': '5' });
  }
  // Safety net: api/app.ts and readRawBody translate these where the body is read.
  if (isDecodingError(err)) return new AppError('INVALID_INPUT', 400, 'Request body could not be decoded with its Content-Encoding');
  if (status === 415 && /Content-Encoding/i.test(e?.message ?? '')) {
    return new AppError('INVALID_INPUT', 415, 'Unsupported Content-Encoding; send the body uncompressed or with exactly one of gzip, deflate, br');
  }
  if (status === 415 || e?.type === 'unsupported.media.type') {
    return new AppError('INVALID_INPUT', 415, 'Unsupported content type; send application/json');
  }
  if (status === 400 && e?.type) return new AppError('INVALID_INPUT', 400, 'Malformed request body');
  // raw-body calls a body it cannot read any more (the client closed the connection while the
  // request waited, e.g. for the rate limiter) a 500; nobody reads the answer, but it is not ours.
  if (e?.type === 'stream.not.readable') return new AppError('INVALID_INPUT', 400, 'The request body could not be read: the connection was closed');
  const dbError = fromDatabaseError(err);
  if (dbError) return dbError;
  return new AppError('INTERNAL_ERROR', 500, 'An unexpected error occurred');
}

export function errorHandler(bodyLimitBytes: number): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const appErr = toAppError(err, bodyLimitBytes);
      if (appErr.status >= 500 && appErr.code === 'INTERNAL_ERROR') {
        logger.error({ err, path: loggablePath(ctx.path), method: ctx.method }, 'unhandled error');
      }
      ctx.status = appErr.status;
      for (const [k, v] of Object.entries(appErr.headers ?? {})) ctx.set(k, v);
      closeIfBodyUnread(ctx.req, (k, v) => ctx.set(k, v));
      const details = appErr.details ?? [];
      ctx.body = {
        error: {
          message: appErr.message,
          code: appErr.code,
          status: appErr.status,
          ...(appErr.details ? { details: details.slice(0, MAX_DETAILS) } : {}),
          ...(details.length > MAX_DETAILS ? { detailsOmitted: details.length - MAX_DETAILS } : {}),
          ...(appErr.extra ?? {}),
        },
      };
    }
  };
}

/**
 * An error can come before the body was read to its end (413, undecodable bytes, 429). Node does
 * not read the rest of a started body, so a kept-alive connection would wait behind unread bytes
 * until the keep-alive timeout. Still sending: answer with `Connection: close`; fully arrived:
 * discard the rest and keep the connection.
 */
function closeIfBodyUnread(req: IncomingMessage, set: (k: string, v: string) => void): void {
  if (req.readableEnded) return;
  if (!req.complete) set('Connection', 'close');
  req.resume();
}
