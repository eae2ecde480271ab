import pino from 'pino';
import { config } from './config';
import { currentLogContext, type LogContext } from './logContext';
import { turnBatchedDestination } from './logDestination';

/**
 * JSON logs. Secrets never reach a log line: the redact paths cover auth headers, cookies,
 * passwords, tokens and provider secrets wherever they appear one level deep in a log object.
 */
export const redactPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["stripe-signature"]',
  'req.headers["paypal-transmission-sig"]',
  'req.headers["x-bank-signature"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.token',
  '*.refreshToken',
  '*.secret',
  '*.webhookSecret',
  '*.apiKey',
  '*.pin',
  'password',
  'token',
];

/**
 * A request path as it may be logged. The last segment of a webhook URL
 * (/api/payment-import/<provider>/<token>) is the connector's secret: whoever reads it can post
 * to the tenant's books, so it is masked like any other credential.
 */
export function loggablePath(path: string): string {
  // Any letter case: /API/payment-import/… does not route (404), but its last segment may still be a real token.
  return path.replace(/^(\/api\/payment-import\/[^/]+\/)[^/]+/i, '$1[redacted]');
}

function level(): string {
  try {
    return config().logLevel;
  } catch {
    // A bad configuration is reported by the entry point with one clear line; log at info meanwhile.
    return 'info';
  }
}

/**
 * pino's isoTime (`,"time":"<Date#toISOString()>"`), the date and time up to the second formatted
 * once per second: a new Date and its toISOString on every line were a few µs of each request.
 */
let isoSecond = Number.NaN;
let isoPrefix = '';
export function isoTime(now = Date.now()): string {
  const ms = now % 1000;
  const second = now - ms;
  if (second !== isoSecond) {
    isoSecond = second;
    isoPrefix = `,"time":"${new Date(second).toISOString().slice(0, 20)}`;
  }
  return `${isoPrefix}${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z"`;
}

const NO_CONTEXT: Partial<LogContext> = Object.freeze({});

/**
 * The request or job the line is written for (shared/logContext.ts), its fields first and the
 * line's own after them (a line's field of the same name wins), in a new object: the stored
 * context is never changed. pino's default merge assigned the line into a copy the mixin made.
 */
export const mergeLogContext = (line: object, context: object): object => (context === NO_CONTEXT ? line : { ...context, ...line });

export const logger = pino(
  {
    level: level(),
    base: { service: 'accounting', pid: process.pid },
    redact: { paths: redactPaths, censor: '[redacted]' },
    timestamp: isoTime,
    mixin: () => currentLogContext() ?? NO_CONTEXT,
    mixinMergeStrategy: mergeLogContext,
  },
  // Stdout, one write per turn of the event loop (shared/logDestination.ts).
  turnBatchedDestination(pino.destination({ dest: 1, sync: true })),
);

export type Logger = typeof logger;
